"""memory.select_memories scores every live memory with inlined arithmetic and lifts by the query's
retrieval, counted on the functions themselves: with track_functions (a superuser-only setting, so
this runs as the local stack's supabase_admin, here and not in the pgTAP files a hosted project
runs), seed 004's score and BM25's term weight are never called as functions (they are inlined),
and no memory is compared character by character with the query (no word_similarity). 200 live
memories: ten goals of confidence 1 (static score 1.5) holding the query's words and 190 facts of
confidence 0.1 (0.1)."""

from __future__ import annotations

import json

import psycopg


def _select_counting_calls(admin_url: str, user, call: str) -> tuple[list[str], dict[str, int]]:
    """Runs `call` as the signed-in user over 200 memories; returns the chosen contents and the calls
    of the functions that matter."""
    with psycopg.connect(admin_url) as conn:
        conn.execute("select memory.register_user(%s)", [user])
        conn.execute("insert into memory.profiles (user_id, name, is_primary) values (%s, 'Me', true)", [user])
        conn.execute(
            """insert into memory.memories (user_id, content, type, confidence)
            select %s, case when i <= 10 then format('Training goal %%s for the marathon', i)
                else format('Fact %%s about the garden', i) end,
                case when i <= 10 then 'goal' else 'fact' end, case when i <= 10 then 1.0 else 0.1 end
            from generate_series(1, 200) as i""", [user])
        conn.execute("set local track_functions = 'all'")
        conn.execute("select set_config('role', 'authenticated', true), set_config('request.jwt.claims', %s, true)",
                     [json.dumps({"sub": str(user), "role": "authenticated"})])
        chosen = [c for (c,) in conn.execute(call).fetchall()]
        conn.execute("reset role")
        calls = dict(conn.execute(
            """select f.funcname, sum(f.calls)::integer from pg_catalog.pg_stat_xact_user_functions as f
            where f.funcname in ('memory_score', 'bm25', 'word_similarity', 'lexical_memories', 'vector_memories')
            group by f.funcname""").fetchall())
        conn.rollback()
    return chosen, calls


def test_selection_scores_inline_and_lifts_through_retrieval(admin_url: str, make_auth_user) -> None:
    chosen, calls = _select_counting_calls(
        admin_url, make_auth_user(),
        "select content from memory.select_memories(p_query => 'how is my marathon training going')")
    assert sorted(chosen) == sorted(f"Training goal {i} for the marathon" for i in range(1, 11))
    assert calls.get("memory_score", 0) == 0, "memory_score is inlined, never called as a function"
    assert calls.get("bm25", 0) == 0, "bm25 is inlined, never called as a function"
    assert calls.get("word_similarity", 0) == 0, "the lift comes from the retrieval, not from comparing each memory"
    assert calls.get("lexical_memories") == 1, "the lexical side runs once for the query"
    assert calls.get("vector_memories", 0) == 0, "without a query embedding the vector side is not called"


def test_selection_without_a_query_calls_no_retrieval(admin_url: str, make_auth_user) -> None:
    chosen, calls = _select_counting_calls(
        admin_url, make_auth_user(), "select content from memory.select_memories()")
    assert sorted(chosen) == sorted(f"Training goal {i} for the marathon" for i in range(1, 11))
    assert calls.get("lexical_memories", 0) == 0 and calls.get("vector_memories", 0) == 0
