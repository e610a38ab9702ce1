DROP TABLE company_leases;
