-- V2: idempotency keys belong to a sender and are kept apart from the archive, so they can be forgotten after the
-- dedup window while the batches stay. The lease says which replica does the work that runs once per store.
CREATE TABLE idempotency_keys (
    sender           TEXT    NOT NULL,           -- SHA-256 (hex) of the credential presented, '' for none,
                                                 -- '*' for a key stored before keys belonged to senders
    idempotency_key  TEXT    NOT NULL,
    body_sha256      TEXT,                       -- of the copy stored, NULL for a key from before V2
    seen_at_ms       BIGINT  NOT NULL,           -- when the copy stored arrived: the dedup window counts from it
    PRIMARY KEY (sender, idempotency_key)
);
INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256, seen_at_ms)
    SELECT '*', idempotency_key, NULL, MIN(received_at_ms) FROM batches
    WHERE idempotency_key IS NOT NULL GROUP BY idempotency_key;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (seen_at_ms);
ALTER TABLE batches DROP CONSTRAINT IF EXISTS batches_idempotency_key_key;
CREATE INDEX batches_by_age ON batches (received_at_ms);
-- A copy whose key was stored with another body: the sender broke its promise, counted apart.
ALTER TABLE duplicates ADD COLUMN conflict INTEGER NOT NULL DEFAULT 0;
CREATE INDEX duplicates_by_age ON duplicates (seen_at_ms);
CREATE TABLE leases (
    name             TEXT    PRIMARY KEY,
    holder           TEXT    NOT NULL,           -- the replica's id
    since_ms         BIGINT  NOT NULL,           -- when this holder took it
    renewed_at_ms    BIGINT  NOT NULL,
    expires_at_ms    BIGINT  NOT NULL            -- the store's clock, not a replica's
);
