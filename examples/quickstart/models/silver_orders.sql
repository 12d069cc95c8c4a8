-- Typed, cleaned orders: one status spelling, amounts as money, UTC times.
-- The batch is what bronze added since the last run, as the table `input`.
SELECT order_id,
       customer_id,
       CAST(amount AS DECIMAL(12,2))    AS amount,
       lower(trim(status))              AS status,
       CAST(ordered_at AS TIMESTAMP)    AS ordered_at
FROM input
