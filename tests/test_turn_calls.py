"""memory.add_turn stores a turn with one insert of two rows and nothing it does not need, counted on
the functions and tables themselves (track_functions, a superuser-only setting, so this runs as the
local stack's supabase_admin): each message is numbered by assign_turn, the answer asks the gate
once and notes its question for extraction instead of queueing a job, each message notes itself
for a vector (the embed job reads the notes, not the history), the import check is not
asked on a connection that never imported, and the search statistics are left to the fold job."""

from __future__ import annotations

import json

import psycopg


def test_a_turn_runs_only_what_it_needs(admin_url: str, make_auth_user) -> None:
    user = make_auth_user()
    with psycopg.connect(admin_url) as conn:
        conn.execute("select memory.register_user(%s)", [user])
        profile = conn.execute("insert into memory.profiles (user_id, is_primary) values (%s, true) returning id",
                               [user]).fetchone()[0]
        conversation = conn.execute(
            "select (memory.create_conversation(p_user_id => %s, p_title => 'Bees', p_profile_id => %s)).id",
            [user, profile]).fetchone()[0]
        conn.execute("set local track_functions = 'all'")
        conn.execute("select set_config('role', 'authenticated', true), set_config('request.jwt.claims', %s, true)",
                     [json.dumps({"sub": str(user), "role": "authenticated"})])
        turn, question, answer = conn.execute(
            "select turn_number, user_message_id, assistant_message_id from memory.add_turn(%s, 'Hello?', 'Hi.')",
            [conversation]).fetchone()
        conn.execute("reset role")
        stored = conn.execute("select id, role, turn_number from memory.messages where conversation_id = %s order by id",
                              [conversation]).fetchall()
        calls = dict(conn.execute(
            """select f.funcname, sum(f.calls)::integer from pg_catalog.pg_stat_xact_user_functions as f
            where f.funcname in (
                'assign_turn', 'extraction_author', 'enqueue', 'add_message', 'unfold_search_terms', 'importing'
            )
            group by f.funcname""").fetchall())
        inserted = dict(conn.execute(
            """select t.relname, t.n_tup_ins::integer from pg_catalog.pg_stat_xact_user_tables as t
            where t.schemaname = 'memory_private' and t.relname in ('jobs', 'pending_extractions', 'pending_embeddings')"""
        ).fetchall())
        statistics = conn.execute(
            """select coalesce(sum(t.n_tup_ins + t.n_tup_upd + t.n_tup_del), 0)::integer
            from pg_catalog.pg_stat_xact_user_tables as t
            where t.schemaname = 'memory_private' and t.relname in ('search_corpus', 'search_terms', 'search_unfolds')"""
        ).fetchone()[0]
        conn.rollback()
    assert stored == [(question, "user", 1), (answer, "assistant", 1)] and turn == 1
    assert calls == {"assign_turn": 2, "extraction_author": 1}
    assert inserted == {"jobs": 0, "pending_extractions": 1, "pending_embeddings": 2}, (
        "the question is noted for extraction, both messages for a vector, and no job is queued")
    assert statistics == 0, "a turn writes no search statistics: the fold job counts it"
