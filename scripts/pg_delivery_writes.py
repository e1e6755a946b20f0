#!/usr/bin/env python3
"""PostgreSQL's own cost of a delivery's three writes, per schema variant.

Writes a psql script that builds a scratch `deliveries` table (the columns, checks and
indexes of migrations/postgres), fans one post out to 50,000 subscribers in one INSERT (as
the fan-out does), then claims and closes the deliveries in batches of 500 (the send stage's
status batches: lock in id order, one UPDATE over an array of ids, commit), with psql's
timing of every statement. Variants:

  base          the schema up to migration 0022 (foreign keys, five indexes)
  nofk          without the foreign keys (migration 0023)
  partial       the three status indexes partial on the open statuses
  nofk_partial  both
  hot           no foreign keys and no index on a column the updates change (fillfactor 60:
                every update can be HOT); not a schema jobwire could run, a floor

Usage (it drops and creates its tables in a schema of its own, `jobwire_write_bench`):
  python3 scripts/pg_delivery_writes.py VARIANT > /tmp/v.sql
  psql -q -h 127.0.0.1 -U postgres -d scratch -f /tmp/v.sql 2>&1 | awk '
    /^PHASE/{p=$2; s="x"} /^S /{s=$2} /^Time:/{t[p"."s]+=$2}
    END{for (k in t) printf "%s %.0f ms\\n", k, t[k]}'
Figures: BENCHMARKS.md, "PostgreSQL's foreign keys on deliveries".
"""
import sys

variant = sys.argv[1]
N = 50000; B = 500
out = []
w = out.append
# Its own schema, so that pointed at a real database by mistake it touches none of jobwire's
# tables; any error stops the script.
w("\\set ON_ERROR_STOP on")
w("CREATE SCHEMA IF NOT EXISTS jobwire_write_bench; SET search_path = jobwire_write_bench;")
w("DROP TABLE IF EXISTS deliveries; DROP TABLE IF EXISTS subscribers; DROP TABLE IF EXISTS posts;")
w("CREATE TABLE posts (id BIGSERIAL PRIMARY KEY, withheld_at BIGINT, text TEXT);")
w("CREATE TABLE subscribers (id BIGSERIAL PRIMARY KEY, chat_id BIGINT NOT NULL UNIQUE, name TEXT, blocked BOOLEAN NOT NULL DEFAULT false, updated_at BIGINT);")
fk = variant not in ("nofk", "nofk_partial", "hot")
ff = " WITH (fillfactor = 60)" if variant in ("hot",) else ""
w(f"""CREATE TABLE deliveries (
    id BIGSERIAL PRIMARY KEY,
    post_id BIGINT NOT NULL {'REFERENCES posts(id)' if fk else ''},
    subscriber_id BIGINT NOT NULL {'REFERENCES subscribers(id)' if fk else ''},
    chat_id BIGINT NOT NULL, bot TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending','held','sending','sent','blocked','failed','withheld')),
    not_before BIGINT, parts_sent INTEGER NOT NULL DEFAULT 0, message_ids JSONB NOT NULL DEFAULT '[]',
    attempts INTEGER NOT NULL DEFAULT 0, resent_after_crash INTEGER NOT NULL DEFAULT 0, error TEXT,
    created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, sent_at BIGINT,
    UNIQUE (post_id, subscriber_id)){ff};""")
open_ = "WHERE status IN ('pending','held','sending')"
if variant in ("base", "nofk"):
    w("CREATE INDEX deliveries_status ON deliveries(status, not_before);")
    w("CREATE INDEX deliveries_subscriber ON deliveries(subscriber_id, status);")
    w("CREATE INDEX deliveries_status_updated ON deliveries(status, updated_at);")
elif variant in ("partial", "nofk_partial"):
    w(f"CREATE INDEX deliveries_status ON deliveries(status, not_before) {open_};")
    w(f"CREATE INDEX deliveries_subscriber ON deliveries(subscriber_id, status) {open_};")
    w(f"CREATE INDEX deliveries_status_updated ON deliveries(status, updated_at) {open_};")
elif variant == "hot":
    w("CREATE INDEX deliveries_subscriber ON deliveries(subscriber_id);")
w(f"INSERT INTO subscribers (chat_id, name, updated_at) SELECT g, 'chat ' || g, 0 FROM generate_series(1,{N}) g;")
w("INSERT INTO posts (text) VALUES ('x');")
w("ANALYZE;")
w("CHECKPOINT;")
w("\\timing on")
w("\\echo PHASE fanout")
w(f"""BEGIN; INSERT INTO deliveries (post_id, subscriber_id, chat_id, bot, status, not_before, created_at, updated_at)
 SELECT 1, g, g, 'dev', 'pending', NULL, 1, 1 FROM generate_series(1,{N}) g ORDER BY g
 ON CONFLICT (post_id, subscriber_id) DO NOTHING RETURNING id \\g /dev/null
COMMIT;""")
ids = list(range(1, N+1))
for phase in ("claim", "last"):
    w(f"\\echo PHASE {phase}")
    for i in range(0, N, B):
        chunk = ids[i:i+B]
        arr = "'{" + ",".join(map(str, chunk)) + "}'::BIGINT[]"
        msg = "'{" + ",".join(str(c+1000) for c in chunk) + "}'::BIGINT[]"
        w("\\echo S begin")
        w("BEGIN; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;")
        w("\\echo S lock")
        w(f"SELECT id FROM deliveries WHERE id = ANY({arr}) ORDER BY id FOR UPDATE \\g /dev/null")
        w("\\echo S update")
        if phase == "claim":
            w(f"UPDATE deliveries SET status = 'sending', attempts = attempts + 1, updated_at = 2 WHERE id = ANY({arr}) AND status || '' = 'pending' RETURNING id \\g /dev/null")
        else:
            w(f"""UPDATE deliveries SET parts_sent = parts_sent + 1, message_ids = message_ids || jsonb_build_array(({msg})[array_position({arr}, id)]), status = 'sent', sent_at = 3, updated_at = 3, error = NULL WHERE id = ANY({arr}) AND status || '' = 'sending' RETURNING id \\g /dev/null""")
        w("\\echo S commit")
        w("COMMIT;")
print("\n".join(out))
