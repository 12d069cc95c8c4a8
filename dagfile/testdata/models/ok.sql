SELECT * FROM input
