"""memory.select_memories does work in proportion to what can be chosen, counted on the function
itself: with track_functions (a superuser-only setting, so this runs as the local stack's supabase_admin,
here and not in the pgTAP files a hosted project runs), seed 004's score is never called as a function (it is inlined) and
the query's lift (word_similarity, the costly part) runs only for memories that can reach the top
ten. 200 live memories: ten goals of confidence 1 (static score 1.5) and 190 facts of
confidence 0.1 (0.1); a fact lifted at most twofold (0.2) stays under the tenth goal's 1.5."""

from __future__ import annotations

import json

import psycopg


def test_selection_scores_inline_and_lifts_only_what_can_be_chosen(admin_url: str, make_auth_user) -> None:
    user = make_auth_user()
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
        chosen = conn.execute("select content from memory.select_memories(p_query => 'how is my marathon training going')"
                              ).fetchall()
        conn.execute("reset role")
        calls = dict(conn.execute(
            """select f.funcname, sum(f.calls)::integer from pg_catalog.pg_stat_xact_user_functions as f
            where f.funcname in ('memory_score', 'word_similarity') group by f.funcname""").fetchall())
        conn.rollback()
    assert sorted(c for (c,) in chosen) == sorted(f"Training goal {i} for the marathon" for i in range(1, 11))
    assert calls.get("memory_score", 0) == 0, "memory_score is inlined, never called as a function"
    assert calls.get("word_similarity") == 10, "the lift runs for the 10 memories that can be chosen, not all 200"
