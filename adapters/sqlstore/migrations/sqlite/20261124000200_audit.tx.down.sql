DROP TABLE audit_event_customers;
--bun:split
DROP TABLE audit_events;
--bun:split
DROP TABLE audit_heads;
