"""Lexical search does its BM25 arithmetic inline, counted on the functions themselves with
track_functions (a superuser-only setting, so this runs as the local stack's supabase_admin, here
and not in the pgTAP files a hosted project runs): memory_private.bm25 is inlined into the
ranking queries, never executed as a function once per candidate and term (20261125020000)."""

from __future__ import annotations

import psycopg


def test_search_weighs_terms_inline(admin_url: str, make_auth_user) -> None:
    user = make_auth_user()
    with psycopg.connect(admin_url) as conn:
        conn.execute("select memory.register_user(%s)", [user])
        conversation = conn.execute("select (memory.create_conversation(p_user_id => %s)).id", [user]).fetchone()[0]
        conn.execute(
            """insert into memory.messages (conversation_id, user_id, role, content)
            select %s, %s, case when i %% 2 = 0 then 'user' else 'assistant' end,
                case when i %% 10 = 0 then format('I planted tomatoes in the garden, week %%s', i)
                else format('Message %%s about the weather in the garden', i) end
            from generate_series(1, 60) as i""", [conversation, user])
        conn.execute("set local track_functions = 'all'")
        conn.execute("set local role service_role")
        found = conn.execute(
            "select content from memory.search_messages(p_query => 'tomatoes garden', p_user_id => %s, p_limit => 6)",
            [user]).fetchall()
        conn.execute("reset role")
        calls = dict(conn.execute(
            """select f.funcname, sum(f.calls)::integer from pg_catalog.pg_stat_xact_user_functions as f
            where f.funcname in ('bm25', 'lexical_messages') group by f.funcname""").fetchall())
        conn.rollback()
    assert [c for (c,) in found] == [f"I planted tomatoes in the garden, week {i}" for i in (10, 20, 30, 40, 50, 60)]
    assert calls.get("lexical_messages") == 1, "the search ranked the messages lexically"
    assert calls.get("bm25", 0) == 0, "bm25 is inlined, never called as a function"
