-- customers_company_id_idx is (company_id, id), which the unique key that
-- the composite foreign keys reference (customers_company_id_id_key) holds
-- already: every insert of a customer kept two b-trees of the same columns.
DROP INDEX customers_company_id_idx;
