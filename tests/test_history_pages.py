"""memory.history's pages, for any conversation, page size and offset: newest-first is the
conversation in reverse order (the newest turn first, its answer before its question) cut at the
offset and the limit, and oldest-first is the same page in reading order. The two orders are two
statements in memory_private.history; this holds them to one definition of the page.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PAGES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PAGES
@given(
    # Each turn a question, answered or not (an unanswered question is a turn of one message).
    answered=st.lists(st.booleans(), max_size=8),
    limit=st.integers(1, 20),
    offset=st.integers(0, 20),
)
def test_both_orders_show_the_same_page_of_the_conversation(client_db, make_id, answered, limit, offset):
    user = client_db.call_value("user_id_for", external_id=make_id("pages"))
    conversation = client_db.call_one("create_conversation", user_id=user)["id"]
    for turn, has_answer in enumerate(answered, start=1):
        if has_answer:
            client_db.call("add_turn", conversation_id=conversation, user_content=f"q{turn}", assistant_content=f"a{turn}")
        else:
            client_db.call("add_message", conversation_id=conversation, role="user", content=f"q{turn}")
    # The conversation newest first: each turn's answer, then its question.
    expected = [text for turn, has_answer in reversed(list(enumerate(answered, start=1)))
                for text in ([f"a{turn}"] if has_answer else []) + [f"q{turn}"]][offset:offset + limit]

    def page(newest: bool) -> list[str]:
        rows = client_db.call("history", conversation_id=conversation, limit=limit, offset=offset, newest_first=newest)
        return [row["content"] for row in rows]

    assert page(True) == expected
    assert page(False) == expected[::-1]
