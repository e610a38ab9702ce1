-- See the PostgreSQL migration. Times are kept as text in the form
-- YYYY-MM-DD HH:MM:SS.SSS+00:00 and compared by julianday.
UPDATE audit_blocks SET
    first_at = (SELECT strftime('%Y-%m-%d %H:%M:%f', min(julianday(json_extract(value, '$.e.time')))) || '+00:00'
                FROM json_each(CAST(audit_blocks.events AS TEXT))),
    last_at  = (SELECT strftime('%Y-%m-%d %H:%M:%f', max(julianday(json_extract(value, '$.e.time')))) || '+00:00'
                FROM json_each(CAST(audit_blocks.events AS TEXT)))
WHERE EXISTS (SELECT 1 FROM json_each(CAST(audit_blocks.events AS TEXT))
              WHERE julianday(json_extract(value, '$.e.time')) < julianday(audit_blocks.first_at)
                 OR julianday(json_extract(value, '$.e.time')) > julianday(audit_blocks.last_at));
