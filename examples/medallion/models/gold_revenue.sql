-- Daily revenue by country and product category.
SELECT date_trunc('day', o.updated_at) AS day,
       c.country,
       p.category_id,
       sum(o.amount)                   AS revenue,
       count(*)                        AS orders
FROM o
JOIN c ON c.customer_id = o.customer_id
LEFT JOIN p ON p.product_id = o.product_id
WHERE o.status = 'paid'
GROUP BY 1, 2, 3
