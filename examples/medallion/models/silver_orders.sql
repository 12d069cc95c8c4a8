-- Typed, de-duplicated orders: the latest version of each order in the batch.
SELECT order_id,
       customer_id,
       product_id,
       session_id,
       amount::DECIMAL(12,2) AS amount,
       lower(status)          AS status,
       updated_at
FROM input
WHERE amount IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY order_id ORDER BY updated_at DESC) = 1
