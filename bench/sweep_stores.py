"""The stores bench/sweep.py seeds and measures: a SQLite file and a PostgreSQL database, each seeded with expired
idempotency keys straight with SQL, emptied and seeded again before every phase, and asked how many keys are left."""
import calendar
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import time

SEEN_FROM_MS = 1_577_836_800_000  # 2020-01-01T00:00:00Z: the seeded keys were first seen within the second after it
SEEN_SPREAD_MS = 1_000


class SqliteStore:
    name = "sqlite"
    # SQLite forgets keys a whole minute at a time: the seeded keys once the minute they were seen in has expired
    forgettable_from_ms = SEEN_FROM_MS // 60_000 * 60_000 + 60_000

    def __init__(self, work):
        self.template = os.path.join(work, "seeded.db")
        self.path = os.path.join(work, "run", "mcpd.db")
        self.data = self.path

    def create(self, template_maker):
        template_maker(self.template)

    def seed(self, keys):
        rng = random.Random(7)
        db = sqlite3.connect(self.template)
        with db:
            db.executemany("INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256, seen_at_ms)"
                           " VALUES ('', ?, ?, ?)",
                           (("relay-" + rng.randbytes(32).hex(), rng.randbytes(32).hex(),
                             SEEN_FROM_MS + rng.randrange(SEEN_SPREAD_MS)) for _ in range(keys)))
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()

    def reset(self):
        """The seeded store, afresh: a copy of the seeded file (on the same disk; its pages in the page cache)."""
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
        os.makedirs(os.path.dirname(self.path))
        shutil.copyfile(self.template, self.path)

    def expired_left(self):
        db = sqlite3.connect(self.path)
        try:
            return db.execute("SELECT COUNT(*) FROM idempotency_keys WHERE seen_at_ms < ?",
                              (SEEN_FROM_MS + SEEN_SPREAD_MS,)).fetchone()[0]
        finally:
            db.close()

    def facts(self):
        return {"sqlite": "WAL, synchronous=FULL"}

    def lock_waits(self, start, end):
        return {}  # ingest's wait for SQLite's one writer is inside the collector, not in a log


class PostgresStore:
    name = "postgres"
    forgettable_from_ms = SEEN_FROM_MS + SEEN_SPREAD_MS

    def __init__(self, url, log):
        self.url = url
        self.data = url
        self.log = log

    def psql(self, sql):
        return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", self.url, "-c", sql],
                              check=True, capture_output=True, text=True).stdout.strip()

    def create(self, template_maker):
        template_maker(self.url)

    def seed(self, keys):
        self.keys = keys
        self.reset()

    def reset(self):
        """Empties the tables and seeds the keys again (random hex from sha256 of a counter, first seen in the counter's
        order), then VACUUM ANALYZE and CHECKPOINT, so every phase starts from the same freshly loaded table."""
        self.psql("TRUNCATE idempotency_keys, batches, duplicates; DELETE FROM leases")
        self.psql("INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256, seen_at_ms) SELECT '',"
                  " 'relay-' || encode(sha256(('seed-' || g)::text::bytea), 'hex'),"
                  " encode(sha256(('body-' || g)::text::bytea), 'hex'),"
                  f" {SEEN_FROM_MS} + (g - 1) * {SEEN_SPREAD_MS} / {self.keys}"
                  f" FROM generate_series(1, {self.keys}) g ORDER BY g")
        self.psql("VACUUM ANALYZE idempotency_keys")
        try:  # a superuser's (or pg_checkpoint's) to ask: the URL's user with the cluster's own user in its place
            subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", re.sub(r"//[^@/]*@", "//postgres@", self.url),
                            "-c", "CHECKPOINT"], check=True, capture_output=True)
        except subprocess.CalledProcessError:
            print("sweep: CHECKPOINT refused; the phase starts with the seed's writes still to checkpoint",
                  file=sys.stderr)

    def expired_left(self):
        return int(self.psql("SELECT COUNT(*) FROM idempotency_keys WHERE seen_at_ms < %d"
                             % (SEEN_FROM_MS + SEEN_SPREAD_MS)))

    def facts(self):
        return {"pg_version": self.psql("SHOW server_version"), "pg_fsync": self.psql("SHOW fsync"),
                "pg_synchronous_commit": self.psql("SHOW synchronous_commit"),
                "pg_full_page_writes": self.psql("SHOW full_page_writes")}

    WAIT = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[\d+\] LOG:  process \d+ still waiting for "
                      r"(.+?) after [\d.]+ ms")

    def lock_waits(self, start, end):
        """The lock waits that outlasted deadlock_timeout in [start, end], by what was waited for, from the server's
        log (log_lock_waits: .ci/postgres.sh turns it on for benchmarks, at 100 ms): whether ingest waited for a lock a
        sweep's chunk holds, or for one of its own (extending a table while the disk is slow)."""
        if not self.log or self.psql("SHOW log_lock_waits") != "on":
            return {}
        if (self.psql("SHOW log_line_prefix"), self.psql("SHOW log_timezone")) not in (("%m [%p]", "UTC"),
                                                                                       ("%m [%p]", "Etc/UTC")):
            # WAIT would match no line of another prefix or zone: no count at all, rather than a false "none"
            print("sweep: the server's log lines are not in the form read here; lock waits not counted",
                  file=sys.stderr)
            return {}
        names = dict(line.split("|", 1) for line in self.psql("SELECT oid, relname FROM pg_class").splitlines())
        waits = {}
        with open(self.log, errors="replace") as f:
            for line in f:
                m = self.WAIT.match(line)
                if not m:
                    continue
                at = calendar.timegm(time.strptime(m.group(1)[:19], "%Y-%m-%d %H:%M:%S")) + float(m.group(1)[19:])
                if start <= at <= end:
                    what = re.sub(r"relation (\d+) of database \d+",
                                  lambda r: "relation " + names.get(r.group(1), r.group(1)), m.group(2))
                    waits[what] = waits.get(what, 0) + 1
        threshold = int(self.psql("SELECT setting FROM pg_settings WHERE name = 'deadlock_timeout'"))
        return {"lock_wait_ms": threshold, "lock_waits": waits}

