-- An invoice or fee note number is unique in its company and never reused
-- (a deleted document keeps its number); a receipt number is unique per register.
CREATE UNIQUE INDEX records_document_number_idx ON records (company_id, kind, (payload->>'number'))
    WHERE kind IN ('invoices', 'fee-notes');
--bun:split
CREATE UNIQUE INDEX records_receipt_number_idx ON records (company_id, (payload->>'register_id'), (payload->>'number'))
    WHERE kind = 'cash-revenues';
