"""Properties of hybrid search, a hypothesis test on the real database.

memory.search_messages fuses the lexical and the vector ranking by score: whatever the turns and
the query's embedding, a turn at least as good as another on both sides and better on one comes
first, every turn with a vector is found, and nothing else is. Each example runs in a transaction
that is rolled back, under a three-dimensional test model, so vectors are chosen by hand.
"""

from __future__ import annotations

import math

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Cosines closer than this count as equal: pgvector computes them in single precision.
SLACK = 1e-4

vectors = st.tuples(*[st.integers(-3, 3)] * 3).filter(any)
turns = st.lists(st.tuples(st.booleans(), vectors), min_size=2, max_size=8)


def cosine(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.dist(a, (0, 0, 0)) / math.dist(b, (0, 0, 0))


def test_a_turn_better_on_one_side_and_no_worse_on_the_other_comes_first(postgres_conn: psycopg.Connection) -> None:
    with postgres_conn.transaction(force_rollback=True):
        postgres_conn.execute("select memory.set_embedding_model('test-3d', 3)")

        @PROPERTY
        @given(turns=turns, query=vectors)
        def check(turns: list[tuple[bool, tuple[int, ...]]], query: tuple[int, ...]) -> None:
            with postgres_conn.transaction(force_rollback=True):
                user = postgres_conn.execute("select memory.user_id_for('prop-search')").fetchone()[0]
                conversation = postgres_conn.execute(
                    "select (memory.create_conversation(p_user_id => %s, p_window_turns => 1000)).id", [user]
                ).fetchone()[0]
                ids = []
                for word, vector in turns:
                    # The same length either way, so every turn holding the word scores alike.
                    text = "zephyr note" if word else "plain note"
                    ids.append(postgres_conn.execute(
                        "select (memory.add_message(%s, 'user', %s)).id", [conversation, text]
                    ).fetchone()[0])
                    postgres_conn.execute(
                        "insert into memory_private.message_embeddings (message_id, user_id, model, embedding) "
                        "values (%s, %s, 'test-3d', %s::extensions.vector)", [ids[-1], user, str(list(vector))]
                    )
                found = [r[0] for r in postgres_conn.execute(
                    "select id from memory.search_messages('zephyr', %s, p_query_embedding => %s::extensions.vector)",
                    [user, str(list(query))],
                ).fetchall()]
                assert sorted(found) == sorted(ids), "every turn has a vector, so the vector side finds each once"
                position = {message: i for i, message in enumerate(found)}
                near = [cosine(vector, query) for _, vector in turns]
                for a, (word_a, _) in enumerate(turns):
                    for b, (word_b, _) in enumerate(turns):
                        better = (word_a and not word_b and near[a] >= near[b] - SLACK) or (
                            word_a >= word_b and near[a] > near[b] + SLACK
                        )
                        if better:
                            assert position[ids[a]] < position[ids[b]], (turns, query, found)

        check()
