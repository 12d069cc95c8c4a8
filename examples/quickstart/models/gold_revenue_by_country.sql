-- Revenue by customer country over every paid order (a full recompute:
-- `o` is the whole of silver.orders, `c` the whole of bronze.customers).
SELECT c.country,
       count(*)                          AS orders,
       sum(o.amount)                     AS revenue,
       CAST(avg(o.amount) AS DECIMAL(12,2)) AS average_order,
       min(o.ordered_at)                 AS first_order,
       max(o.ordered_at)                 AS last_order
FROM o
JOIN c USING (customer_id)
WHERE o.status = 'paid'
GROUP BY c.country
ORDER BY revenue DESC
