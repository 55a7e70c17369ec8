"""A database that stops answering without refusing anything (a network partition, a stalled
proxy: tests/db_proxy.py holds every byte): with a deadline, calls are cut and answered from the
fallback instead of waiting for TCP to give up, and the turns come back once it answers again.
A statement the server cancels at its statement_timeout is an outage too: it committed nothing."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from db_proxy import DbProxy, db_proxy
from llm_server import chat_completion, llm_server  # noqa: F401 (fixture)
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from server_helpers import serve

from jobs.llm import LLMClient, LLMSettings
from supamem import ConversationStore, Database
from supamem.deadline import Deadline
from supamem.errors import DatabaseUnavailableError, StatementCancelledError, error_for
from supamem_server.settings import ServerSettings

#: Far below TCP's quarter of an hour, far above the deadlines used here.
NO_WAIT_ON_TCP = 30.0
T = TypeVar("T")


@pytest.fixture
def proxy(database_url: str):
    target = conninfo_to_dict(database_url)
    with db_proxy(str(target.get("host") or "127.0.0.1"), int(target.get("port") or 5432)) as proxy:
        yield proxy


def _through(database_url: str, proxy: DbProxy) -> str:
    return make_conninfo(database_url, host="127.0.0.1", port=proxy.port)


def _promptly(work: Callable[[], T]) -> T:
    """`work`'s result, failing the test (not hanging it) when it waits on the silence."""
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(work).result(timeout=NO_WAIT_ON_TCP)
    finally:
        pool.shutdown(wait=False)


def _select_one(db: Database) -> None:
    with db.transaction() as tx:
        tx.execute("select 1")


def test_a_silent_database_is_an_outage_once_the_deadline_passes(database_url, proxy, make_id):
    db = Database(_through(database_url, proxy), max_size=2, connect_timeout=1.0, retry_interval=0.2, deadline=1.0)
    try:
        store = ConversationStore(db)
        user = make_id("stall")
        assert store.store_turn(user, "before", "the partition") and len(store.fallback) == 0
        proxy.stall()
        try:
            with pytest.raises(DatabaseUnavailableError, match="deadline"):
                _promptly(lambda: _select_one(db))
            assert _promptly(lambda: store.store_turn(user, "during", "the partition"))
        finally:
            proxy.resume()
        assert len(store.fallback) == 1, "held in the fallback"
        assert not db.is_open, "the pool is retired: calls fail at once while it reconnects"
        assert db.wait_available(60)
        assert store.store_turn(user, "after", "it") and len(store.fallback) == 0
        assert [(h["user_query"], h["turn_number"]) for h in store.get_history(user)] == [
            ("before", 1), ("during", 2), ("after", 3)], "written back in order, once"
    finally:
        db.close()


def test_one_slow_checkout_past_the_deadline_is_cut_but_no_outage(database_url):
    """A transaction that holds its connection past the deadline on a server that answers is cut,
    but the server takes a new connection: the pool stays, and the next call goes through."""
    db = Database(database_url, max_size=2, connect_timeout=5.0, deadline=0.5)
    try:
        with pytest.raises(DatabaseUnavailableError, match="deadline"), db.transaction() as tx:
            tx.execute("select pg_sleep(2)")
        assert db.is_open and not db.is_down, "not retired"
        with db.transaction() as tx:
            assert tx.execute("select 1 as one")[0]["one"] == 1
    finally:
        db.close()


def test_a_slow_answer_within_the_deadline_is_an_answer(database_url, proxy):
    db = Database(_through(database_url, proxy), max_size=1, deadline=NO_WAIT_ON_TCP)
    try:
        with db.transaction() as tx:
            assert tx.execute("select pg_sleep(0.3), 1 as one")[0]["one"] == 1
    finally:
        db.close()


def test_the_chat_answers_degraded_through_a_partition(database_url, postgres_conn, proxy, llm_server):  # noqa: F811
    """Seed 001, property 8, when the database goes silent: the answer comes degraded within the
    server's deadline instead of the request hanging, and its turn is written back afterwards."""
    model = LLMClient(LLMSettings(provider="openai", base_url=llm_server.base_url, api_key="k", max_retries=0))
    for served in serve(_through(database_url, proxy), postgres_conn, llm=model, database_deadline=1.0):
        alice = served.person()
        llm_server.enqueue(chat_completion("Four runs a week."), chat_completion("Add a long run."),
                           chat_completion("Rest on Sunday."))
        session = alice.http.post("/chat", json={"message": "Plan my running week"}).json()["conversation_id"]
        proxy.stall()
        try:  # the server stops only once its requests end: the silence ends whatever happens
            during = alice.http.post("/chat", json={"message": "And on weekends?", "conversation_id": session})
        finally:
            proxy.resume()
        assert during.status_code == 200, during.text
        assert (during.json()["degraded"], during.json()["conversation_id"]) == (True, session)
        assert "database could not be reached" in during.json()["error"], "seed 001's error field says so"
        assert served.app.state.supamem.db.wait_available(60)
        after = alice.http.post("/chat", json={"message": "And rest days?", "conversation_id": session})
        assert (after.json()["degraded"], after.json()["error"]) == (False, None)
        rows = postgres_conn.execute(
            "select turn_number, content from memory.messages where conversation_id = %s and role = 'user'"
            " order by turn_number", [session]).fetchall()
        assert rows == [(1, "Plan my running week"), (2, "And on weekends?"), (3, "And rest days?")]
        scraped = served.anonymous().get("/metrics").text
        assert 'supamem_chat_answers_total{outcome="degraded"} 1.0' in scraped, "the outage is counted"


def test_a_statement_cancelled_at_its_timeout_is_an_outage(client_db):
    """An outage to the chat; to the worker, an answer (StatementCancelledError: nothing committed)."""
    assert isinstance(error_for("57014", "canceling statement due to statement timeout"), DatabaseUnavailableError)
    with pytest.raises(StatementCancelledError, match="statement timeout"), client_db.transaction() as tx:
        tx.execute("set local statement_timeout = '50ms'")
        tx.execute("select pg_sleep(5)")


def test_the_server_cuts_at_ten_seconds_unless_told_otherwise():
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s"}).database_deadline == 10
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s", "SUPAMEM_DB_DEADLINE": "2.5"}).database_deadline == 2.5
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s", "SUPAMEM_DB_DEADLINE": "0"}).database_deadline is None
    with pytest.raises(ValueError, match="positive"):
        Deadline(0)
