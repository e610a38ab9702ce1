DROP TABLE files;
--bun:split
DROP TABLE customers;
--bun:split
DROP TABLE companies;
