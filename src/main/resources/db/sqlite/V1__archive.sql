-- V1: the archive. A batch and its idempotency key are one row, so the key is recorded in the same transaction as
-- the batch, and the database's unique index decides which of two racing copies is stored.
CREATE TABLE batches (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key  TEXT UNIQUE,                -- NULL for a request without a key: never deduplicated
    target           TEXT    NOT NULL,           -- path and query
    content_type     TEXT    NOT NULL,
    content_encoding TEXT    NOT NULL,
    received_at_ms   INTEGER NOT NULL,
    events           INTEGER NOT NULL,           -- events accepted (an OTLP request counts as one)
    rejected         INTEGER NOT NULL,           -- events rejected (not JSON objects)
    body             BLOB    NOT NULL            -- as received, never decoded
);
-- Every copy of a batch that arrived again: what /v1/stats reports as duplicates.
CREATE TABLE duplicates (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key  TEXT    NOT NULL,
    events           INTEGER NOT NULL,
    seen_at_ms       INTEGER NOT NULL
);
