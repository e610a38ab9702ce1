CREATE INDEX customers_company_id_idx ON customers (company_id, id);
