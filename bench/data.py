"""Set-based data generation (insert ... select from generate_series), run as postgres.

Three paths, all measured and reported:
- through the kit: the rows go through every trigger (turn numbering under the conversation's row
  lock, window, gate, job enqueueing) exactly as an RPC or Data API insert would;
- through the kit's import (`memory.import_messages`, batches of 10,000): turns numbered
  set-based, each conversation updated once, no per-turn jobs;
- filler: `session_replication_role = replica` turns the triggers (and FK checks) off for the
  session, and the generator fills the derived columns itself (turn_number, user_id, created_at,
  conversations.last_turn). Used only for background rows that no benchmark reads directly.
"""

from __future__ import annotations

from typing import Any

import psycopg

from .common import Timer, admin, log, one, replica_mode

# Words for filler text, so messages and memories look like prose to the text search.
WORDS = (
    "weather travel paris coffee running marathon sister birthday project deadline budget garden "
    "painting guitar recipe dinner movie weekend hiking camping beach museum book novel poetry "
    "school exam teacher doctor appointment gym yoga dog cat puppy kitten car bike train flight "
    "hotel concert festival wedding anniversary promotion interview resume salary rent apartment "
    "kitchen bakery pasta pizza salad soup chocolate tea morning evening night holiday winter "
    "summer spring autumn rain snow sunshine ocean mountain river forest city village friend "
    "family brother mother father grandmother cousin neighbor colleague manager startup code "
    "python database server deploy release bug feature design meeting"
).split()


def reset_data() -> None:
    """Every workload starts from an empty kit (the schema and settings stay)."""
    with admin() as conn:
        conn.execute("truncate memory.users, memory.tenants, memory_private.jobs, memory_private.pending_extractions,"
                     " memory_private.pending_summaries, memory_private.pending_embeddings cascade")
        conn.execute("vacuum (analyze) memory.messages, memory.conversations, memory.memories, memory.memory_events")


def text_expr(seed: str, words: int = 12) -> str:
    """A SQL expression: `words` pseudo-random words chosen by hashing `seed` (a SQL expression)."""
    n = len(WORDS)
    arr = "array[" + ",".join(f"'{w}'" for w in WORDS) + "]"
    parts = [f"({arr})[1 + mod(abs(hashtext(({seed})::text || '{i}')::bigint), {n})]" for i in range(words)]
    return " || ' ' || ".join(parts)


def create_users(conn: psycopg.Connection, count: int, prefix: str, *, profiles: bool = True,
                 conversation_title: str | None = None, conversation_profile: bool = False,
                 ttl: str | None = None) -> float:
    """`count` users named prefix-N (external ids), each with a primary profile and optionally
    one conversation titled `conversation_title`. Set-based; conversations' defaults trigger
    runs (cheap). Returns seconds."""
    with Timer() as t:
        conn.execute(
            "insert into memory.users (external_id) select %s || g from generate_series(1, %s) as g",
            (f"{prefix}-", count),
        )
        if profiles:
            conn.execute(
                "insert into memory.profiles (user_id, tenant_id, is_primary) "
                "select u.id, u.tenant_id, true from memory.users as u "
                "where u.external_id like %s and not exists (select 1 from memory.profiles p where p.user_id = u.id)",
                (f"{prefix}-%",),
            )
        if conversation_title is not None:
            conn.execute(
                "insert into memory.conversations (user_id, profile_id, title, ttl) "
                "select u.id, case when %s then p.id end, %s, %s::interval from memory.users as u "
                "left join memory.profiles as p on p.user_id = u.id and p.is_primary "
                "where u.external_id like %s",
                (conversation_profile, conversation_title, ttl, f"{prefix}-%"),
            )
    return t.seconds


def filler_messages(conn: psycopg.Connection, title: str, pairs_per_conversation: int,
                    *, chunk_rows: int = 1_000_000, expired: bool = False,
                    expire_conversation: bool = True) -> dict[str, Any]:
    """Append `pairs_per_conversation` turns (user + assistant message) to every conversation
    titled `title`, bypassing triggers; rows are interleaved across conversations (turn-major),
    as real traffic would leave them. Returns rows and seconds."""
    n_conv = one(conn, "select count(*) from memory.conversations where title = %s", (title,))
    if not n_conv or pairs_per_conversation <= 0:
        return {"rows": 0, "seconds": 0.0}
    per_chunk = max(1, chunk_rows // (2 * n_conv))
    rows = 0
    expires = "now() - interval '1 hour'" if expired else "case when c.ttl is null then null else now() + c.ttl end"
    content = text_expr("c.id::text || g::text || r.role", 14)
    with Timer() as t, replica_mode(conn):
        conn.execute("set work_mem = '256MB'")
        for start in range(1, pairs_per_conversation + 1, per_chunk):
            stop = min(pairs_per_conversation, start + per_chunk - 1)
            cur = conn.execute(
                f"""
                insert into memory.messages (conversation_id, user_id, tenant_id, role, content, turn_number,
                    created_at, expires_at)
                select c.id, c.user_id, c.tenant_id, r.role, {content}, c.last_turn + g, now(), {expires}
                from generate_series(%s::int, %s::int) as g
                cross join memory.conversations as c
                cross join (values ('user'), ('assistant')) as r (role)
                where c.title = %s
                order by g, c.id, r.role desc
                """,
                (start, stop, title),
            )
            rows += cur.rowcount
        expiry = ", expires_at = now() - interval '1 hour'" if expired and expire_conversation else ""
        conn.execute(
            f"update memory.conversations as c set last_turn = c.last_turn + %s, updated_at = now(){expiry} "
            "where c.title = %s",
            (pairs_per_conversation, title),
        )
        conn.execute("reset work_mem")
    return {"rows": rows, "seconds": t.seconds, "rows_per_second": round(rows / t.seconds) if t.seconds else None}


def triggered_messages(conn: psycopg.Connection, title: str, pairs_per_conversation: int) -> dict[str, Any]:
    """The same shape through the kit's triggers (turn numbering, window, gate, enqueue)."""
    content = text_expr("c.id::text || g::text || r.role", 14)
    with Timer() as t:
        cur = conn.execute(
            f"""
            insert into memory.messages (conversation_id, role, content)
            select c.id, r.role, {content}
            from generate_series(1, %s) as g
            cross join memory.conversations as c
            cross join (values ('user'), ('assistant')) as r (role)
            where c.title = %s
            order by g, c.id, r.role desc
            """,
            (pairs_per_conversation, title),
        )
        rows = cur.rowcount
    return {"rows": rows, "seconds": t.seconds, "rows_per_second": round(rows / t.seconds) if t.seconds else None}


def imported_messages(conn: psycopg.Connection, title: str, pairs_per_conversation: int,
                      *, batch: int = 10_000) -> dict[str, Any]:
    """The same shape through `memory.import_messages`, as the service role, `batch` messages a call."""
    content = text_expr("c.id::text || g::text || r.role", 14)
    per_call = max(1, batch // (2 * pairs_per_conversation))
    ids = [row[0] for row in conn.execute("select id from memory.conversations where title = %s order by id", (title,))]
    rows = 0
    with Timer() as t:
        conn.execute("set role service_role")
        for start in range(0, len(ids), per_call):
            rows += sum(n for (n,) in conn.execute(
                f"""
                select i.imported from memory.import_messages((
                    select jsonb_agg(jsonb_build_object('conversation_id', c.id, 'role', r.role, 'content', {content})
                        order by g, c.id, r.role desc)
                    from generate_series(1, %s) as g
                    cross join memory.conversations as c
                    cross join (values ('user'), ('assistant')) as r (role)
                    where c.id = any(%s)
                )) as i
                """,
                (pairs_per_conversation, ids[start:start + per_call]),
            ))
        conn.execute("reset role")
    return {"rows": rows, "seconds": t.seconds, "rows_per_second": round(rows / t.seconds) if t.seconds else None}


def filler_memories(conn: psycopg.Connection, prefix: str, per_profile: int, *, chunk_rows: int = 500_000,
                    probe_prefix: str | None = None, probe_count: int = 0) -> dict[str, Any]:
    """`per_profile` memories for every primary profile of users named prefix-N (and
    `probe_count` for users named probe_prefix-N), bypassing triggers, interleaved across users;
    then their profiles' selections are built."""
    n_users = one(conn, "select count(*) from memory.users where external_id like %s", (f"{prefix}-%",))
    total_per = max(per_profile, probe_count)
    per_chunk = max(1, chunk_rows // max(1, n_users))
    types = "array['fact','preference','goal','pattern','relationship','emotion','decision','project','entity']"
    content = text_expr("p.id::text || g::text", 10)
    rows = 0
    with Timer() as t, replica_mode(conn):
        conn.execute("set work_mem = '256MB'")
        for start in range(1, total_per + 1, per_chunk):
            stop = min(total_per, start + per_chunk - 1)
            cur = conn.execute(
                f"""
                insert into memory.memories (user_id, tenant_id, profile_id, content, type, confidence, created_at,
                    last_referenced_at, reference_count, number)
                select p.user_id, p.tenant_id, p.id, 'The user ' || {content} || ' #' || g,
                    ({types})[1 + mod(g, 9)], 0.5 + mod(g, 50) / 100.0,
                    now() - make_interval(hours => g), now() - make_interval(hours => mod(g, 500)), mod(g, 7),
                    u.memories_numbered + g
                from generate_series(%s::int, %s::int) as g
                cross join memory.profiles as p
                join memory.users as u on u.id = p.user_id
                where p.is_primary and (
                    (u.external_id like %s and g <= %s) or (u.external_id like %s and g <= %s))
                order by g, p.id
                """,
                (start, stop, f"{prefix}-%", per_profile, f"{probe_prefix or '-none-'}-%", probe_count),
            )
            rows += cur.rowcount
        conn.execute("reset work_mem")
    # The numbering trigger did not run either: numbered after each user's count, which moves to the last.
    conn.execute(
        "update memory.users as u set memories_numbered = n.last"
        " from (select m.user_id, max(m.number) as last from memory.memories as m group by m.user_id) as n"
        " where n.user_id = u.id and (u.external_id like %s or u.external_id like %s)",
        (f"{prefix}-%", f"{probe_prefix or '-none-'}-%"),
    )
    # The trigger that keeps each profile's selection did not run: mark those selections unbuilt
    # and build them as the kit's minutely refresh does (timed on its own).
    conn.execute(
        "update memory_private.memory_selections as s set bound = 'Infinity', bound_id = null, stale_at = now()"
        " from memory.profiles as p join memory.users as u on u.id = p.user_id"
        " where s.profile_id = p.id and (u.external_id like %s or u.external_id like %s)",
        (f"{prefix}-%", f"{probe_prefix or '-none-'}-%"),
    )
    with Timer() as tr:
        refreshed = one(conn, "select memory_private.refresh_memory_selections(2147483647)")
    return {"rows": rows, "seconds": t.seconds, "rows_per_second": round(rows / t.seconds) if t.seconds else None,
            "selections_built": refreshed, "selections_seconds": tr.seconds}


def table_sizes() -> dict[str, Any]:
    with admin() as conn:
        rows = conn.execute(
            """
            select c.relname, c.reltuples::bigint, pg_total_relation_size(c.oid)
            from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = 'memory' and c.relkind = 'r'
                and c.relname in ('users', 'conversations', 'messages', 'memories', 'memory_events')
            """
        ).fetchall()
    return {name: {"rows_estimate": int(tuples), "bytes": int(size)} for name, tuples, size in rows}


def count(table: str) -> int:
    with admin() as conn:
        return int(one(conn, f"select count(*) from {table}"))  # fixed names from the caller


def log_step(what: str, info: dict[str, Any]) -> None:
    log(f"{what}: {info.get('rows')} rows in {info.get('seconds')} s ({info.get('rows_per_second')} rows/s)")
