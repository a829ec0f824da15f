-- V3: the sweep forgets keys a whole minute at a time, through an index on the minute they were first seen. Its
-- entries for one minute are in key order, which is the table's own order (WITHOUT ROWID): keys first seen close
-- together, such as a relay's backlog drained at once, are forgotten a page at a time, not a page per key as they were
-- through the index on the exact time.
DROP INDEX idempotency_keys_by_age;
CREATE INDEX idempotency_keys_by_minute ON idempotency_keys (seen_at_ms / 60000);
