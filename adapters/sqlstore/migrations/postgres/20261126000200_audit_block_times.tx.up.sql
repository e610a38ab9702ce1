-- A block's first_at and last_at are where a query by time looks for its
-- events (last_at >= from AND first_at < to). They were the times of the
-- block's first and last event; a group commit's events need not be in time
-- order, so an event could lie outside them and hide from such a query.
-- They become the earliest and the latest time of the block's events (the
-- code seals them so from now on); existing blocks are mended here.
-- `praxis admin audit verify` checks every event against them.
UPDATE audit_blocks b SET first_at = t.first_at, last_at = t.last_at
FROM (
    SELECT company_id, first_seq,
           min((e -> 'e' ->> 'time')::timestamptz) AS first_at,
           max((e -> 'e' ->> 'time')::timestamptz) AS last_at
    FROM audit_blocks, jsonb_array_elements(convert_from(events, 'UTF8')::jsonb) AS e
    GROUP BY company_id, first_seq
) t
WHERE b.company_id = t.company_id AND b.first_seq = t.first_seq
  AND (t.first_at < b.first_at OR t.last_at > b.last_at);
