-- Revenue by customer country, kept up to date incrementally:
--   o     the paid orders silver added since gold's last run (only those),
--   c     every customer (a lookup: read whole on each run),
--   this  gold as it stands (empty on the first run and after a reset to
--         earliest, when o is all of silver).
-- The new orders are aggregated per country and merged with the stored
-- totals of the same countries; mode upsert on country replaces just those
-- rows. average_order is derived from the merged totals, never averaged.
WITH batch AS (
    SELECT c.country,
           count(*)          AS orders,
           sum(o.amount)     AS revenue,
           min(o.ordered_at) AS first_order,
           max(o.ordered_at) AS last_order
    FROM o
    JOIN c USING (customer_id)
    WHERE o.status = 'paid'
    GROUP BY c.country
)
SELECT b.country,
       b.orders + coalesce(t.orders, 0)                    AS orders,
       b.revenue + coalesce(t.revenue, 0)                  AS revenue,
       CAST((b.revenue + coalesce(t.revenue, 0)) / (b.orders + coalesce(t.orders, 0))
            AS DECIMAL(12,2))                              AS average_order,
       least(b.first_order, t.first_order)                 AS first_order,
       greatest(b.last_order, t.last_order)                AS last_order
FROM batch b
LEFT JOIN this t USING (country)
ORDER BY revenue DESC
