-- See the PostgreSQL migration.
CREATE UNIQUE INDEX records_document_number_idx ON records (company_id, kind, json_extract(payload, '$.number'))
    WHERE kind IN ('invoices', 'fee-notes');
--bun:split
CREATE UNIQUE INDEX records_receipt_number_idx ON records (company_id, json_extract(payload, '$.register_id'), json_extract(payload, '$.number'))
    WHERE kind = 'cash-revenues';
