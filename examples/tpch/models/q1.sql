-- TPC-H Q1's rows: the aggregate (weir.yaml) sums, averages and counts them
SELECT l_returnflag, l_linestatus, l_quantity, l_extendedprice, l_discount,
       l_extendedprice * (1 - l_discount) AS disc_price,
       l_extendedprice * (1 - l_discount) * (1 + l_tax) AS charge
FROM input
WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY
