-- Patients in an order (docs/contract.md §15): the alphabetical list, by last
-- name then first name (sort=last_name,first_name; FHIR _sort=family,given),
-- is read from this index a page at a time, from the cursor's keys on
-- (adapters/sqlstore/feed.go, sortedPage). Other orders sort the rows a
-- search keeps.
CREATE INDEX customers_sort_name_idx ON customers (company_id, search_family, search_given, id);
