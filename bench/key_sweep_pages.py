#!/usr/bin/env python3
"""What forgetting one idempotency key costs SQLite, by the index the sweep finds expired keys through.

A store of --keys keys (random `relay-<sha256>` keys and body hashes, as a relay's are) in the collector's table of
idempotency keys (in key order: WITHOUT ROWID), first seen over --spreads (seconds each: within one second; over the
time a collector takes them in at 1 000 a second; over a day). For each spread and each index the sweep could walk —
`exact` on the first-seen time (schema version 2), `minute` on its minute, each minute's keys then in key order,
whole minutes at a time (version 3) — a copy of the store forgets --forget of its oldest keys in chunks of 100 rows
with the collector's DELETE, each chunk its own transaction as the sweep runs them, and the write-ahead log's growth
is read: its frames are pages written, and each is written again to the database file at the next checkpoint. One JSON line per
measurement on stdout; --out appends them to a file.

Usage: bench/key_sweep_pages.py [--keys N] [--forget N] [--spreads S,S,S] [--work DIR] [--out FILE]
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

SEEN_FROM_MS = 1_577_836_800_000
CHUNK = 100
FRAME_HEADER = 24
TABLE = """CREATE TABLE idempotency_keys (sender TEXT NOT NULL, idempotency_key TEXT NOT NULL, body_sha256 TEXT,
    seen_at_ms INTEGER NOT NULL, PRIMARY KEY (sender, idempotency_key)) WITHOUT ROWID"""
INDEXES = {
    "exact": ("CREATE INDEX idempotency_keys_by_age ON idempotency_keys (seen_at_ms)",
              "DELETE FROM idempotency_keys WHERE (sender, idempotency_key) IN (SELECT sender, idempotency_key"
              " FROM idempotency_keys WHERE seen_at_ms < ?1 LIMIT ?2)"),
    "minute": ("CREATE INDEX idempotency_keys_by_minute ON idempotency_keys (seen_at_ms / 60000)",
               "DELETE FROM idempotency_keys WHERE (sender, idempotency_key) IN (SELECT sender, idempotency_key"
               " FROM idempotency_keys WHERE seen_at_ms / 60000 < ?1 / 60000"
               " ORDER BY seen_at_ms / 60000, sender, idempotency_key LIMIT ?2)"),
}


def seeded(path, keys, spread_s):
    """A store without its index: keys first seen evenly over spread_s seconds."""
    rng = random.Random(7)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(TABLE)
    with db:
        db.executemany("INSERT INTO idempotency_keys VALUES ('', ?, ?, ?)",
                       (("relay-" + rng.randbytes(32).hex(), rng.randbytes(32).hex(),
                         SEEN_FROM_MS + i * spread_s * 1000 // keys) for i in range(keys)))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def measure(template, work, index, forget, spread_s, keys):
    path = os.path.join(work, "run.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    shutil.copyfile(template, path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(INDEXES[index][0])
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("PRAGMA wal_autocheckpoint=0")  # the log keeps every frame the chunks wrote, to be counted
    page = db.execute("PRAGMA page_size").fetchone()[0]
    # every key has expired, the last one's minute too: the sweep takes the oldest first
    cutoff = (SEEN_FROM_MS + spread_s * 1000) // 60_000 * 60_000 + 60_000 + 1
    forgotten = 0
    started = time.perf_counter()
    while forgotten < forget:
        db.execute("BEGIN IMMEDIATE")
        forgotten += db.execute(INDEXES[index][1], (cutoff, CHUNK)).rowcount
        db.execute("COMMIT")
    took = time.perf_counter() - started
    frames = (os.path.getsize(path + "-wal") - 32) // (page + FRAME_HEADER)
    db.close()
    return {"kind": "key-sweep-pages", "index": index, "spread_s": spread_s, "keys": keys, "forgotten": forgotten,
            "chunk": CHUNK, "page_size": page, "pages_per_key": round(frames / forgotten, 3),
            "us_per_key": round(took * 1e6 / forgotten, 1), "sqlite": sqlite3.sqlite_version}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--forget", type=int, default=20_000)
    parser.add_argument("--spreads", default="1,1000,86400")
    parser.add_argument("--work")
    parser.add_argument("--out")
    args = parser.parse_args()
    try:
        spreads = [int(s) for s in args.spreads.split(",")]
    except ValueError:
        parser.error("--spreads: seconds, comma-separated, such as 1,1000,86400")
    work = tempfile.mkdtemp(prefix="key-sweep-", dir=args.work)
    try:
        for spread in spreads:
            template = os.path.join(work, "seeded.db")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(template + suffix):
                    os.remove(template + suffix)
            seeded(template, args.keys, spread)
            for index in INDEXES:
                row = measure(template, work, index, args.forget, spread, args.keys)
                print(json.dumps(row), flush=True)
                if args.out:
                    with open(args.out, "a") as out:
                        out.write(json.dumps(row) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
