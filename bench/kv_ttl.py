"""4. Key-value memory with TTL: the kit's `kv_set/kv_get` (no expiry) and
`short_term_set/short_term_get` (expiry) with `memory.sweep_expired`, against LangGraph's
`PostgresStore` (`put`/`get`, `ttl={...}`, `sweep_ttl()`), on the same server.

Both sides get the same keys and JSON values through one client each (the kit's
`supamem.Database`; the store on a psycopg connection configured as its `from_conn_string`
does). Calls are interleaved. Both TTL reads refresh the expiry: the store's by its default
(`refresh_on_read`), the kit's because its short-term state expires after inactivity (seed 001).
The sweep: the same number of expired rows on each side, inserted set-based, then deleted by
each side's own sweep (the kit's in bounded batches of `sweep_batch_size`, as pg_cron runs it;
the store's in one statement).
"""

from __future__ import annotations

import itertools
from typing import Any

from . import data
from .common import Timer, admin, bench_url, kit_database, log, one, pick, service, vacuum_analyze
from .stats import interleaved, ratio, summarize

USERS = 100
KEYS = 20
VALUE = {"theme": "dark", "language": "en", "last_topic": "marathon training", "count": 3,
         "flags": {"beta": True, "digest": "weekly"}}


def run() -> dict[str, Any]:
    import psycopg
    from langgraph.store.postgres import PostgresStore
    from psycopg.rows import dict_row

    data.reset_data()
    with admin() as conn:
        conn.execute("drop table if exists public.store_vectors, public.store, public.store_migrations, "
                     "public.vector_migrations cascade")
    store_conn = psycopg.connect(bench_url(), autocommit=True, prepare_threshold=0, row_factory=dict_row)
    store = PostgresStore(store_conn, ttl={"default_ttl": 5, "refresh_on_read": True})
    store.setup()
    with service() as conn:
        users = [str(one(conn, "select memory.user_id_for(%s)", (f"kv-{i}",))) for i in range(USERS)]
    db = kit_database(max_size=1)
    # Fill both sides so reads find their keys.
    for u in users:
        for k in range(KEYS):
            db.call("kv_set", key=f"key-{k}", value=VALUE, user_id=u)
            db.call("short_term_set", key=f"key-{k}", value=VALUE, ttl="5 minutes", user_id=u)
            store.put(("users", u, "kv"), f"key-{k}", VALUE, ttl=None)
            store.put(("users", u, "short"), f"key-{k}", VALUE, ttl=5)
    n = pick(400, 2000)
    pair = {"kv": itertools.cycle([(u, f"key-{k}") for u in users for k in range(KEYS)])}

    def step(fn: Any) -> Any:
        return lambda: fn(*next(pair["kv"]))

    ops = {
        "kit kv_set": step(lambda u, k: db.call("kv_set", key=k, value=VALUE, user_id=u)),
        "peer put (no ttl)": step(lambda u, k: store.put(("users", u, "kv"), k, VALUE, ttl=None)),
        "kit kv_get": step(lambda u, k: db.call("kv_get", key=k, user_id=u)),
        "peer get (no ttl)": step(lambda u, k: store.get(("users", u, "kv"), k, refresh_ttl=False)),
        "kit short_term_set (ttl)": step(lambda u, k: db.call("short_term_set", key=k, value=VALUE,
                                                              ttl="5 minutes", user_id=u)),
        "peer put (ttl)": step(lambda u, k: store.put(("users", u, "short"), k, VALUE, ttl=5)),
        "kit short_term_get (ttl)": step(lambda u, k: db.call("short_term_get", key=k, user_id=u)),
        "peer get (ttl, refresh on read)": step(lambda u, k: store.get(("users", u, "short"), k)),
    }
    samples = interleaved(ops, n, 50)
    out: dict[str, Any] = {"samples": n, "ops": {k: summarize(v) for k, v in samples.items()}}
    o = out["ops"]
    out["ratios_p50_kit_over_peer"] = {
        "set (no ttl)": ratio(o["kit kv_set"]["p50_us"], o["peer put (no ttl)"]["p50_us"]),
        "get (no ttl)": ratio(o["kit kv_get"]["p50_us"], o["peer get (no ttl)"]["p50_us"]),
        "set (ttl)": ratio(o["kit short_term_set (ttl)"]["p50_us"], o["peer put (ttl)"]["p50_us"]),
        "get (ttl)": ratio(o["kit short_term_get (ttl)"]["p50_us"], o["peer get (ttl, refresh on read)"]["p50_us"]),
    }
    # Correctness spot checks: both sides return the value.
    assert db.call_value("kv_get", key="key-1", user_id=users[1]) == VALUE
    assert store.get(("users", users[1], "kv"), "key-1").value == VALUE

    # The sweep: N expired rows on each side, beside the live ones.
    sweeps = []
    for expired in pick([10_000], [50_000, 100_000, 200_000]):
        with admin() as conn:
            conn.execute(
                "insert into memory.short_term_state (user_id, key, value, expires_at) "
                "select u.id, 'expired-' || g, %s::jsonb, now() - interval '1 minute' "
                "from generate_series(1, %s) as g join lateral (select id from memory.users "
                "where external_id = 'kv-' || mod(g, %s)) as u on true",
                (psycopg.types.json.Jsonb(VALUE), expired, USERS),
            )
            conn.execute(
                "insert into public.store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) "
                "select 'users.' || mod(g, %s) || '.short', 'expired-' || g, %s::jsonb, now(), now(), "
                "now() - interval '1 minute', 5 from generate_series(1, %s) as g",
                (USERS, psycopg.types.json.Jsonb(VALUE), expired),
            )
        vacuum_analyze("memory.short_term_state", "public.store")
        with Timer() as tk:
            batches = 0
            deleted = 0
            resume = None
            while True:  # each batch resumes where the last stopped, as pg_cron's sweep does
                row = db.call_one("sweep_expired", resume=psycopg.types.json.Jsonb(resume) if resume else None)
                batches += 1
                deleted += row["short_term_deleted"]
                resume = row.pop("resume")
                if max(row.values()) < 5000:
                    break
        with Timer() as tp:
            peer_deleted = store.sweep_ttl()
        entry = {"expired_rows": expired, "kit_seconds": tk.seconds, "kit_batches": batches, "kit_deleted": deleted,
                 "peer_seconds": tp.seconds, "peer_deleted": peer_deleted,
                 "kit_seconds_per_100k": round(tk.seconds * 100_000 / max(1, deleted), 3),
                 "peer_seconds_per_100k": round(tp.seconds * 100_000 / max(1, peer_deleted), 3),
                 "ratio": ratio(tk.seconds, tp.seconds)}
        sweeps.append(entry)
        log(f"kv_ttl: sweep {expired}: kit {tk.seconds}s in {batches} batches, peer {tp.seconds}s")
    out["sweeps"] = sweeps
    db.close()
    store_conn.close()
    return out
