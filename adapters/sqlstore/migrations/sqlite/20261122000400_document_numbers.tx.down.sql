DROP INDEX records_receipt_number_idx;
--bun:split
DROP INDEX records_document_number_idx;
