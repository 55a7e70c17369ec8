"""Seed 000/001's chat endpoint: history and memories in the prompt, the turn stored with the
memories it used, sessions continued or started, and the answer streamed as server-sent events."""

from __future__ import annotations

import json
import logging
import threading
from datetime import timedelta
from typing import Any

import anyio
import httpx
import psycopg
import pytest
from llm_server import Scripted, ScriptedLLMServer, chat_completion, llm_server, sse_chunks  # noqa: F401 (fixture)
from psycopg.types.json import Jsonb
from server_helpers import Person, Served, busy_connections, serve

from jobs.embeddings import EmbeddingClient, OfflineEmbeddings
from jobs.llm import LLMClient, LLMSettings
from supamem_server.chat_prompt import SYSTEM_PROMPT
from supamem_server.settings import ServerSettings


def _profiled(person: Person) -> str:
    profile = person.http.post("/api/profiles", json={"name": "Me", "primary": True}).json()["id"]
    person.http.post("/api/memories", json={"content": "Training for the Berlin marathon", "type": "goal"})
    return profile


def test_an_answer_uses_memories_and_is_stored_with_them(served: Served) -> None:
    alice = served.person()
    profile = _profiled(alice)
    first = alice.http.post("/chat", json={"message": "How should I plan my running week?", "profile_id": profile})
    assert first.status_code == 200, first.text
    body = first.json()
    # With its number, for seed 004's chip ("[M-1 goal]").
    assert [(m["number"], m["type"], m["content"]) for m in body["used_memories"]] == [
        (1, "goal", "Training for the Berlin marathon")]
    assert "Training for the Berlin marathon" in body["response"], "the offline model saw the memory in its prompt"
    stored = served.postgres_conn.execute(
        "select role, content, used_memory_ids from memory.messages where conversation_id = %s order by id",
        [body["session_id"]]).fetchall()
    assert [(r[0], r[1]) for r in stored] == [("user", "How should I plan my running week?"), ("assistant", body["response"])]
    assert [str(i) for i in stored[1][2]] == [m["id"] for m in body["used_memories"]]
    (metadata,) = served.postgres_conn.execute(
        "select metadata from memory.messages where conversation_id = %s and role = 'assistant'", [body["session_id"]]).fetchone()
    assert "memory_arm" not in metadata, "no arm while nothing is held out"
    referenced = served.postgres_conn.execute(
        "select reference_count from memory.memories where id = %s", [body["used_memories"][0]["id"]]).fetchone()
    assert referenced == (1,), "the use is counted once, when the answer is stored"

    second = alice.http.post("/chat", json={"message": "And the week after?", "session_id": body["session_id"]}).json()
    assert second["session_id"] == body["session_id"]
    turns = served.postgres_conn.execute(
        "select max(turn_number) from memory.messages where conversation_id = %s", [body["session_id"]]).fetchone()
    assert turns == (2,)


def test_a_seed_001_client_sends_query_and_reads_message(served: Served) -> None:
    """Seed 001's request and response names: `query` for the question, `message` for the answer,
    beside seed 002's; the caller is the token's user, whatever `user_id` the body names. The app's
    turn metadata (seed 001 stores intent, confidence and result count) is stored with both messages
    and comes back; `error` is empty when nothing went wrong."""
    carol, other = served.person(), served.person()
    turn = {"intent": "definition", "confidence": 0.92, "result_count": 0}
    asked = carol.http.post("/chat", json={"query": "What is a tempo run?", "user_id": str(other.id), "role": "member",
                                           "metadata": turn})
    assert asked.status_code == 200, asked.text
    body = asked.json()
    assert (body["query"], body["message"]) == ("What is a tempo run?", body["response"]) and body["message"]
    assert (body["metadata"], body["error"]) == (turn, None)
    stored = served.postgres_conn.execute(
        "select role, metadata from memory.messages where conversation_id = %s order by role", [body["session_id"]]).fetchall()
    assert stored == [("assistant", turn), ("user", turn)]
    (owner,) = served.postgres_conn.execute(
        "select user_id from memory.conversations where id = %s", [body["session_id"]]).fetchone()
    assert owner == carol.id
    again = carol.http.post("/chat", json={"query": "And an easy run?", "session_id": body["session_id"]}).json()
    assert (again["session_id"], again["query"]) == (body["session_id"], "And an easy run?")
    assert carol.http.post("/chat", json={"user_id": str(carol.id)}).status_code == 422, "a question is required"


def test_a_pending_clarification_reaches_the_prompt_and_is_answered_once(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """Seed 001: a clarification the app asked the user for (short-term memory) is what their next
    message answers: the model is told, and once the turn is stored it is cleared."""
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        dana = served.person()
        dana.http.get("/api/profiles")  # her first request makes her kit user
        postgres_conn.execute("select memory.short_term_set('clarification', %s, p_user_id => %s)",
                              [Jsonb({"question": "Which Porto do you mean?"}), dana.id])
        llm_server.enqueue(chat_completion("Porto, Portugal it is."), chat_completion("You are welcome."))
        assert dana.http.post("/chat", json={"message": "The one in Portugal"}).status_code == 200
        system = llm_server.requests[-1].json["messages"][0]["content"]
        assert "## Pending clarification" in system and "Which Porto do you mean?" in system
        assert postgres_conn.execute("select memory.short_term_get('clarification', %s)", [dana.id]).fetchone() == (None,)
        dana.http.post("/chat", json={"message": "Thanks"})
        assert "Pending clarification" not in llm_server.requests[-1].json["messages"][0]["content"]

        # The app asks another question while the model answers the first: that one stays pending.
        def ask_again(user: Any = dana.id) -> None:
            postgres_conn.execute("select memory.short_term_set('clarification', %s, p_user_id => %s)",
                                  [Jsonb({"question": "Which day?"}), user])

        postgres_conn.execute("select memory.short_term_set('clarification', %s, p_user_id => %s)",
                              [Jsonb({"question": "Which month?"}), dana.id])
        llm_server.enqueue(Scripted(200, chunks=sse_chunks("June", " then."), between=ask_again))
        events = _stream_chat(dana, {"message": "June"})
        assert [kind for kind, _ in events][-1] == "done"
        (pending,) = postgres_conn.execute("select memory.short_term_get('clarification', %s)", [dana.id]).fetchone()
        assert pending == {"question": "Which day?"}, "only the clarification the turn answered is cleared"

        # What the app stored is compared as the database holds it: numbers past a float's range or
        # precision are no reason to fail the turn, nor to leave the clarification pending.
        postgres_conn.execute("select memory.short_term_set('clarification', %s::jsonb, p_user_id => %s)",
                              ['{"question": "How many?", "n": 1e400, "id": 123456789012345678901234567890.5}', dana.id])
        llm_server.enqueue(chat_completion("That many."))
        answered = dana.http.post("/chat", json={"message": "All of them"})
        assert answered.status_code == 200, answered.text
        assert '"id": 123456789012345678901234567890.5' in llm_server.requests[-1].json["messages"][0]["content"]
        assert postgres_conn.execute("select memory.short_term_get('clarification', %s)", [dana.id]).fetchone() == (None,)


def test_a_generic_chat_uses_no_memories(served: Served) -> None:
    bob = served.person()
    _profiled(bob)
    body = bob.http.post("/chat", json={"message": "Tell me a joke"}).json()
    assert body["used_memories"] == []
    assert "marathon" not in body["response"]


def test_an_invalid_or_foreign_session_id_starts_a_new_session(served: Served) -> None:
    owner, stranger = served.person(), served.person()
    theirs = owner.http.post("/chat", json={"message": "Private question"}).json()["session_id"]
    for session_id in (theirs, "not-a-uuid", "00000000-0000-4000-8000-000000000000"):
        reply = stranger.http.post("/chat", json={"message": "Hello", "session_id": session_id})
        assert reply.status_code == 200
        assert reply.json()["session_id"] != theirs
    count = served.postgres_conn.execute("select count(*) from memory.messages where conversation_id = %s", [theirs]).fetchone()
    assert count == (2,), "the owner's session got nothing of the stranger's"


def test_the_answer_streams_as_server_sent_events(served: Served) -> None:
    carol = served.person()
    events = _stream_chat(carol, {"message": "Stream it"})
    tokens = "".join(data for kind, data in events if kind == "token")
    done = [data for kind, data in events if kind == "done"]
    assert len(done) == 1 and tokens == done[0]["response"]
    assert len([kind for kind, _ in events if kind == "token"]) > 1, "the answer came in pieces"
    stored = served.postgres_conn.execute(
        "select content from memory.messages where conversation_id = %s and role = 'assistant'", [done[0]["session_id"]]
    ).fetchone()
    assert stored == (done[0]["response"],)


def test_bad_chat_bodies_are_422_and_store_nothing(served: Served) -> None:
    dana = served.person()
    assert dana.http.post("/chat", json={}).status_code == 422
    empty = dana.http.post("/chat", json={"message": "   "})
    assert empty.status_code == 422
    # The app context goes into the prompt and nowhere else: bounded, or any user could send megabytes.
    huge = dana.http.post("/chat", json={"message": "Hello", "context": {"page": "x" * 8_000}})
    assert huge.status_code == 422 and "context must be at most 8,000 characters" in huge.text
    heavy = dana.http.post("/chat", json={"message": "Hello", "metadata": {"note": "x" * 8_000}})
    assert heavy.status_code == 422 and "metadata must be at most 8,000 characters" in heavy.text
    # The kit's own keys: a forged A/B arm would skew seed 004's comparison, a client id the replay.
    for key in ("memory_arm", "client_turn_id"):
        forged = dana.http.post("/chat", json={"message": "Hello", "metadata": {key: "holdout"}})
        assert forged.status_code == 422 and f"metadata keys {key} are the kit's own" in forged.text
    count = served.postgres_conn.execute("select count(*) from memory.messages where user_id = %s", [dana.id]).fetchone()
    assert count == (0,)


class _Recording(OfflineEmbeddings):
    """The offline embeddings, remembering what they were asked to embed."""

    def __init__(self) -> None:
        self.inputs: list[str] = []

    def embeddings(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.inputs.extend(payload["input"])
        return super().embeddings(payload)


def test_the_question_is_embedded_for_the_memory_selection(database_url: str, postgres_conn: psycopg.Connection) -> None:
    recording = _Recording()
    for served in serve(database_url, postgres_conn, EmbeddingClient(LLMSettings(provider="offline"), transport=recording)):
        alice = served.person()
        profile = _profiled(alice)
        body = alice.http.post("/chat", json={"message": "Any photographer advice?", "profile_id": profile}).json()
        assert recording.inputs == ["Any photographer advice?"]
        assert [m["content"] for m in body["used_memories"]] == ["Training for the Berlin marathon"]


def test_a_failing_embeddings_server_leaves_the_chat_lexical(database_url: str, postgres_conn: psycopg.Connection) -> None:
    # A server for another model than the database's: every embedding fails, the chat goes on.
    broken = EmbeddingClient(LLMSettings(provider="openai", base_url="http://127.0.0.1:9/v1", api_key="k",
                                         env_prefix="SUPAMEM_EMBEDDING"))
    for served in serve(database_url, postgres_conn, broken):
        alice = served.person()
        profile = _profiled(alice)
        response = alice.http.post("/chat", json={"message": "How should I plan my running week?", "profile_id": profile})
        assert response.status_code == 200, response.text
        assert [m["content"] for m in response.json()["used_memories"]] == ["Training for the Berlin marathon"]


def _model(server: ScriptedLLMServer) -> LLMClient:
    return LLMClient(LLMSettings(provider="openai", base_url=server.base_url, api_key="k", max_retries=0))


def test_the_model_is_asked_with_no_database_connection_held(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """A model answers in seconds: a transaction open meanwhile would hold one of the pool's
    connections, and a pool of ten would serve ten chats at a time."""
    busy: list[int] = []
    llm_server.enqueue(Scripted(200, chat_completion("Rest on Sunday.").body,
                                during=lambda: busy.append(busy_connections(database_url))))
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        alice = served.person()
        response = alice.http.post("/chat", json={"message": "How should I plan my running week?"})
        assert response.status_code == 200, response.text
        assert response.json()["response"] == "Rest on Sunday."
        assert busy == [0]
        (turns,) = postgres_conn.execute(
            "select count(*) from memory.messages where user_id = %s", [alice.id]).fetchone()
        assert turns == 2


def test_a_failing_model_is_a_502_and_keeps_no_new_session(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        alice = served.person()
        llm_server.enqueue(chat_completion("First answer."))
        session = alice.http.post("/chat", json={"message": "Hello there"}).json()["session_id"]
        # A 400 is not retried: the model refused the request.
        llm_server.enqueue(Scripted(400, {"error": {"message": "bad request: the prompt said something"}}),
                           Scripted(400, {"error": {"message": "bad request"}}))
        started = alice.http.post("/chat", json={"message": "A new topic"})
        assert started.status_code == 502
        assert started.json() == {"detail": "the language model did not answer; try again"}
        continued = alice.http.post("/chat", json={"message": "And then?", "session_id": session})
        assert continued.status_code == 502
        rows = postgres_conn.execute(
            "select c.id, count(m.id) from memory.conversations as c"
            " left join memory.messages as m on m.conversation_id = c.id where c.user_id = %s group by c.id",
            [alice.id]).fetchall()
        assert [(str(r[0]), r[1]) for r in rows] == [(session, 2)], "the session started for it is gone"


class _Watching(OfflineEmbeddings):
    """The offline embeddings, counting the app's busy connections while each text is embedded."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.busy: list[int] = []

    def embeddings(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.busy.append(busy_connections(self.database_url))
        return super().embeddings(payload)


def test_a_search_and_a_chat_are_embedded_with_no_database_connection_held(
    database_url: str, postgres_conn: psycopg.Connection,
) -> None:
    watching = _Watching(database_url)
    for served in serve(database_url, postgres_conn, EmbeddingClient(LLMSettings(provider="offline"), transport=watching)):
        alice = served.person()
        _profiled(alice)
        assert alice.http.get("/api/memories", params={"search": "marathon"}).status_code == 200
        assert alice.http.get("/api/conversations", params={"search": "marathon"}).status_code == 200
        assert alice.http.post("/chat", json={"message": "How is my marathon going?"}).status_code == 200
    assert watching.busy == [0, 0, 0]


def test_the_prompt_holds_context_memories_summary_history_and_the_turn_referred_to(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """Seed 000's prompt (the window, "User is referring to: ...") with seed 002's sections (the
    app's context, what you know about the user, the conversation summary), asked of the model
    exactly so; seed 002's `conversation_id` continues the conversation and comes back."""
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        alice = served.person()
        profile = _profiled(alice)
        llm_server.enqueue(chat_completion("Four runs a week."), chat_completion("Add a long run."),
                           chat_completion("The plan had four runs."))
        first = alice.http.post("/chat", json={"message": "How should I plan my running week?", "profile_id": profile})
        conversation = first.json()["conversation_id"]
        assert conversation == first.json()["session_id"]
        second = alice.http.post("/chat", json={"message": "And on weekends?", "conversation_id": conversation})
        assert second.json()["conversation_id"] == conversation
        postgres_conn.execute(
            "insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary)"
            " select id, user_id, profile_id, 1, 2, 'Alice plans her running weeks.' from memory.conversations where id = %s",
            [conversation])
        third = alice.http.post("/chat", json={"message": "Tell me more about the first one", "conversation_id": conversation,
                                               "context": {"page": "training", "units": "km"}})
        assert third.status_code == 200, third.text
        assert third.json()["conversation_id"] == conversation
        system = llm_server.requests[-1].json["messages"][0]["content"]
        assert system == (
            SYSTEM_PROMPT
            + '\n\n## Context\n- page: "training"\n- units: "km"\n'
            + "\n\n## What You Know About the User\n- Training for the Berlin marathon\n"
            + "\n\n## Conversation Summary\nAlice plans her running weeks."
            + "\n\nPrevious conversation:\nTurn 1:\nUser: How should I plan my running week?\nAI: Four runs a week."
            + "\n\nTurn 2:\nUser: And on weekends?\nAI: Add a long run."
            + "\n\nUser is referring to: How should I plan my running week?\nYou answered then: Four runs a week."
        )
        assert llm_server.requests[-1].json["messages"][1] == {"role": "user", "content": "Tell me more about the first one"}
        (turns,) = postgres_conn.execute(
            "select count(*) from memory.messages where conversation_id = %s", [conversation]).fetchone()
        assert turns == 6


def test_a_session_id_and_a_different_conversation_id_are_422(served: Served) -> None:
    erin = served.person()
    session = erin.http.post("/chat", json={"message": "Hello"}).json()["session_id"]
    both = erin.http.post("/chat", json={"message": "Again", "session_id": session,
                                         "conversation_id": "00000000-0000-4000-8000-000000000000"})
    assert both.status_code == 422
    same = erin.http.post("/chat", json={"message": "Again", "session_id": session, "conversation_id": session})
    assert same.status_code == 200 and same.json()["conversation_id"] == session


def test_a_held_out_conversation_is_answered_without_its_memories_marked_logged_and_counted(
    database_url: str, postgres_conn: psycopg.Connection, caplog: pytest.LogCaptureFixture,
) -> None:
    """Seed 004's A/B tracking and prompt usage metrics: with every conversation held out the
    memories selected are left out of the prompt and not counted as used, the answer is marked
    `memory_arm: holdout`, the log says what the prompt held, and the metrics count the arm."""
    for served in serve(database_url, postgres_conn, memory_holdout=1.0):
        ivan = served.person()
        profile = _profiled(ivan)
        with caplog.at_level(logging.INFO, logger="supamem_server.chat"):
            body = ivan.http.post("/chat", json={"message": "How should I plan my running week?", "profile_id": profile}).json()
        assert body["used_memories"] == []
        assert "Training for the Berlin marathon" not in body["response"], "the offline model was not shown the memory"
        (metadata, used) = postgres_conn.execute(
            "select metadata, used_memory_ids from memory.messages where conversation_id = %s and role = 'assistant'",
            [body["conversation_id"]]).fetchone()
        assert (metadata.get("memory_arm"), used) == ("holdout", [])
        answered = [r for r in caplog.records if r.getMessage().startswith("chat answered")]
        assert len(answered) == 1
        assert "memories in the prompt: 0" in answered[0].getMessage() and "arm holdout" in answered[0].getMessage()
        assert answered[0].supamem_prompt_tokens > 0 and answered[0].supamem_memory_arm == "holdout"
        assert answered[0].supamem_injection_ms > 0 and "(read in " in answered[0].getMessage()
        metrics = ivan.http.get("/api/memories/metrics").json()
        assert [(m["answers"], m["answers_with_memories"], m["answers_held_out"], m["memories_added"]) for m in metrics] == [
            (1, 0, 1, 1)]
        assert ivan.http.get("/api/memories/metrics", params={"days": 0}).status_code == 422


def _stream_chat(person: Any, body: dict[str, Any], on_token: Any = None) -> list[tuple[str | None, Any]]:
    """The events of a streamed /chat, in order; `on_token(data)` runs as each token arrives."""
    events: list[tuple[str | None, Any]] = []
    with person.http.stream("POST", "/chat", params={"stream": "true"}, json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: "):
                events.append((event, json.loads(line[len("data: "):])))
                if event == "token" and on_token is not None:
                    on_token(events[-1][1])
    return events


def test_a_streamed_answer_reaches_the_client_before_the_model_has_finished(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """Seed 002: the answer streams as the model writes it, and the turn is saved once it is whole."""
    release = threading.Event()
    llm_server.enqueue(Scripted(200, chunks=sse_chunks("Rest", " on", " Sunday."), between=lambda: release.wait(30)))
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        alice = served.person()
        stored_at_first_token: list[int] = []

        def first_token(_data: Any, user: Any = alice.id, seen: list[int] = stored_at_first_token) -> None:
            if not release.is_set():
                (n,) = postgres_conn.execute("select count(*) from memory.messages where user_id = %s", [user]).fetchone()
                seen.append(n)
                release.set()  # only now does the model write the rest

        events = _stream_chat(alice, {"message": "When should I rest?"}, first_token)
        assert [data for kind, data in events if kind == "token"] == ["Rest", " on", " Sunday."]
        (done,) = [data for kind, data in events if kind == "done"]
        assert done["response"] == "Rest on Sunday."
        assert stored_at_first_token == [0], "the first piece arrived while the model was still writing"
        stored = postgres_conn.execute(
            "select role, content from memory.messages where conversation_id = %s order by id", [done["conversation_id"]]
        ).fetchall()
        assert stored == [("user", "When should I rest?"), ("assistant", "Rest on Sunday.")]
        assert llm_server.requests[-1].json["stream"] is True


def test_a_client_gone_mid_stream_stores_nothing_and_leaves_no_session(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """A client that goes away before the answer is whole: nothing is stored, and the session the
    request started is deleted again (it stayed behind, empty)."""
    release, gone = threading.Event(), threading.Event()

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("the client went away mid-stream"):
                gone.set()

    watcher, chat_log = Seen(), logging.getLogger("supamem_server.chat")
    chat_log.addHandler(watcher)
    chat_log.setLevel(logging.INFO)
    llm_server.enqueue(Scripted(200, chunks=sse_chunks("Half", " of", " it."), between=lambda: release.wait(30)))
    try:
        for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
            alice = served.person()
            with alice.http.stream("POST", "/chat", params={"stream": "true"}, json={"message": "Tell me"}) as response:
                assert next(line for line in response.iter_lines() if line.startswith("data: ")) == 'data: "Half"'
            release.set()  # the model writes on, to a client that has gone
            assert gone.wait(30), "the server saw the client go"
            (left,) = postgres_conn.execute("select count(*) from memory.conversations where user_id = %s",
                                            [alice.id]).fetchone()
            assert left == 0, "the session the request started is gone, and no turn was stored"
    finally:
        chat_log.removeHandler(watcher)
        chat_log.setLevel(logging.NOTSET)


def test_a_client_gone_before_the_answer_is_sent_leaves_no_session(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """A client gone while the model wrote its first piece: the server reports the disconnect
    before a byte of the response is sent, so the events are never run; the session the request
    started is deleted all the same, and nothing is stored. The test plays the ASGI server."""
    llm_server.enqueue(Scripted(200, chunks=sse_chunks("Never", " sent.")))
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        alice = served.person()
        incoming = [{"type": "http.request", "body": json.dumps({"message": "Tell me"}).encode(), "more_body": False},
                    {"type": "http.disconnect"}]

        async def receive(incoming: list[dict[str, Any]] = incoming) -> dict[str, Any]:
            return incoming.pop(0)

        async def send(_message: dict[str, Any]) -> None:
            await anyio.sleep_forever()  # the client is gone: nothing is written

        scope = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": "/chat", "raw_path": b"/chat", "root_path": "",
            "query_string": b"stream=true", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80),
            "headers": [(b"authorization", f"Bearer {alice.token}".encode()), (b"content-type", b"application/json")],
        }
        anyio.run(served.app, scope, receive, send)
        assert not incoming, "the app read the request and saw the client go"
        (left,) = postgres_conn.execute("select count(*) from memory.conversations where user_id = %s",
                                        [alice.id]).fetchone()
        assert left == 0, "the session the request started is gone, and no turn was stored"


def test_a_stream_cut_off_ends_with_an_error_event_and_stores_nothing(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    llm_server.enqueue(Scripted(200, chunks=sse_chunks("Half an", " answer", done=False)),
                       Scripted(400, {"error": {"message": "bad request"}}))
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        bob = served.person()
        events = _stream_chat(bob, {"message": "Tell me everything"})
        assert [kind for kind, _ in events] == ["token", "token", "error"]
        assert events[-1][1] == {"detail": "the language model stopped answering; try again"}
        refused = bob.http.post("/chat", params={"stream": "true"}, json={"message": "Again"})
        assert refused.status_code == 502, "a model that fails before its first piece is a 502"
        (conversations,) = postgres_conn.execute(
            "select count(*) from memory.conversations where user_id = %s", [bob.id]).fetchone()
        assert conversations == 0, "the sessions these requests started are gone, and no turn was stored"


def test_the_prompt_shows_the_window_of_turns_the_server_is_set_to(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """Seed 001's CONVERSATION_HISTORY_LIMIT sets how many turns the chat's prompt shows (10 by
    default, seed 000's window); out of range it is refused when the server starts."""
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s", "CONVERSATION_HISTORY_LIMIT": "3"}).history_turns == 3
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s"}).history_turns == 10
    with pytest.raises(ValueError, match="history_turns"):
        ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s", "CONVERSATION_HISTORY_LIMIT": "0"})
    for served in serve(database_url, postgres_conn, llm=_model(llm_server), history_turns=2):
        kim = served.person()
        llm_server.enqueue(*(chat_completion(f"Answer {i}.") for i in range(4)))
        conversation = None
        for i in range(4):
            conversation = kim.http.post("/chat", json={"message": f"Question {i}?", "conversation_id": conversation}).json()[
                "conversation_id"]
        system = llm_server.requests[-1].json["messages"][0]["content"]
        assert "Turn 2:\nUser: Question 1?" in system and "Turn 3:\nUser: Question 2?" in system
        assert "Question 0?" not in system, "only the last two turns are shown"


def test_sessions_the_chat_starts_keep_their_turns_as_long_as_the_server_is_set_to(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """Seed 001's CONVERSATION_TTL_HOURS, when set, is the life of a session /chat starts (its
    turns then expire and are swept); unset, the kit's setting keeps them (seed 004's list)."""
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s", "CONVERSATION_TTL_HOURS": "24"}).conversation_ttl_hours == 24
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s"}).conversation_ttl_hours is None
    with pytest.raises(ValueError, match="conversation_ttl_hours"):
        ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s", "CONVERSATION_TTL_HOURS": "-1"})
    for hours in (24.0, None):
        for served in serve(database_url, postgres_conn, llm=_model(llm_server), conversation_ttl_hours=hours):
            lea = served.person()
            llm_server.enqueue(chat_completion("Noted."))
            session = lea.http.post("/chat", json={"message": "Remind me later"}).json()["conversation_id"]
            (ttl, expires) = postgres_conn.execute(
                "select ttl, expires_at - updated_at from memory.conversations where id = %s", [session]).fetchone()
            expected = timedelta(hours=hours) if hours else None
            assert (ttl, expires) == (expected, expected), hours


def test_a_pasted_document_reaches_later_prompts_as_its_beginning(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """A long turn of the window is cut at llm_text_chars (20,000) with a line saying what was left
    out: whole, it went into every later answer's prompt, past a small model's context each time."""
    document = "Chapter one. " + "x" * 29_987
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        lena = served.person()
        llm_server.enqueue(chat_completion("A fine chapter."), chat_completion("It opens with chapter one."))
        first = lena.http.post("/chat", json={"message": document})
        assert first.status_code == 200, first.text
        assert llm_server.requests[-1].json["messages"][1]["content"] == document, "the question itself goes whole"
        lena.http.post("/chat", json={"message": "How does it open?", "conversation_id": first.json()["conversation_id"]})
        system = llm_server.requests[-1].json["messages"][0]["content"]
        assert f"User: {document[:20_000]}\n[… 10000 more characters not shown]\nAI: A fine chapter." in system
        assert document[:20_001] not in system


def test_a_streamed_answer_that_cannot_be_stored_ends_done_with_its_error(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """A turn the database refuses once the answer is written (here its conversation was deleted
    while the model wrote) is reported in the stream's `done`: the answer, and why it was not stored."""
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        lena = served.person()

        def delete_the_conversation(user: Any = lena.id) -> None:
            postgres_conn.execute("delete from memory.conversations where user_id = %s", [user])

        llm_server.enqueue(Scripted(200, chunks=sse_chunks("Gone", " soon."), between=delete_the_conversation))
        events = _stream_chat(lena, {"message": "Are you there?"})
        assert [kind for kind, _ in events] == ["token", "token", "done"]
        assert events[-1][1]["response"] == "Gone soon." and events[-1][1]["error"].startswith("the answer could not be stored")
        (messages,) = postgres_conn.execute("select count(*) from memory.messages where user_id = %s", [lena.id]).fetchone()
        assert messages == 0


@pytest.fixture
def limits(postgres_conn: psycopg.Connection) -> Any:
    """Sets the request limits for a test (memory.take_request), and restores them."""
    keys = ("chat_rate_limit", "search_rate_limit")
    before = postgres_conn.execute("select key, value from memory_private.settings where key = any(%s)", [list(keys)])
    saved = dict(before.fetchall())

    def set_limit(key: str, value: int) -> None:
        postgres_conn.execute("update memory_private.settings set value = %s where key = %s", [Jsonb(value), key])

    yield set_limit
    for key, value in saved.items():
        postgres_conn.execute("update memory_private.settings set value = %s where key = %s", [Jsonb(value), key])


def test_past_the_chat_limit_a_request_is_429_and_no_model_is_asked(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer, limits: Any,  # noqa: F811
) -> None:
    limits("chat_rate_limit", 2)
    limits("search_rate_limit", 1)
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        mia, noor = served.person(), served.person()
        llm_server.enqueue(*(chat_completion(f"Answer {n}.") for n in range(3)))
        for n in range(2):
            assert mia.http.post("/chat", json={"message": f"Question {n}?"}).status_code == 200
        asked = len(llm_server.requests)
        for params in ({}, {"stream": "true"}):
            refused = mia.http.post("/chat", params=params, json={"message": "One more?"})
            assert refused.status_code == 429, refused.text
            assert refused.json()["detail"] == "rate limit: chat requests, 2 per user per minute"
        assert len(llm_server.requests) == asked, "no model was asked"
        (stored,) = postgres_conn.execute("select count(*) from memory.messages where user_id = %s", [mia.id]).fetchone()
        assert stored == 4, "nothing of the refused requests was stored"
        assert noor.http.post("/chat", json={"message": "Hello?"}).status_code == 200, "the limit is each user's"
        # A search with words is an embedding: the same, with its own limit; a listing is not one.
        assert mia.http.get("/api/memories", params={"search": "garden"}).status_code == 200
        refused = mia.http.get("/api/memories", params={"search": "garden"})
        assert refused.status_code == 429 and refused.json()["detail"] == "rate limit: search requests, 1 per user per minute"
        assert mia.http.get("/api/memories").status_code == 200


def test_an_answer_the_database_refuses_is_given_unstored_and_keeps_no_new_session(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """The model answered past the 100,000 characters a message holds, which the database refuses.
    Seed 001: storing the turn failed, the chat goes on: the user gets the answer, its `error` says
    it was not stored, and the session this request started is deleted again, streamed or not."""
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        ines = served.person()
        llm_server.enqueue(chat_completion("x" * 100_001), Scripted(200, chunks=sse_chunks("x" * 50_001, "x" * 50_000)))
        given = ines.http.post("/chat", json={"message": "Hello?"})
        assert given.status_code == 200, given.text
        assert len(given.json()["response"]) == 100_001 and given.json()["answer_id"] is None
        assert given.json()["error"].startswith("the answer could not be stored")
        streamed = ines.http.post("/chat", params={"stream": "true"}, json={"message": "Hello?"})
        done = json.loads(streamed.text.split("event: done\ndata: ", 1)[1].split("\n", 1)[0])
        assert done["error"].startswith("the answer could not be stored") and len(done["response"]) == 100_001
        (left,) = postgres_conn.execute("select count(*) from memory.conversations where user_id = %s",
                                        [ines.id]).fetchone()
        assert left == 0, "the sessions these requests started are gone"


def test_a_chat_sent_again_with_its_client_turn_id_gets_the_stored_turn_back(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """A request sent again with the same client_turn_id (its response lost on the way) gets the turn
    stored by the first back, plain or streamed, without asking the model or storing it twice;
    another user's id of the same text is theirs alone."""
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        alice, bob = served.person(), served.person()
        llm_server.enqueue(chat_completion("Four runs a week."))
        body = {"message": "Plan my running week", "client_turn_id": "turn-1", "metadata": {"intent": "plan"}}
        first = alice.http.post("/chat", json=body).json()
        again = alice.http.post("/chat", json=body).json()
        assert first["replayed"] is False and again["replayed"] is True
        assert first["metadata"] == {"intent": "plan", "client_turn_id": "turn-1"}
        assert {k: v for k, v in again.items() if k != "replayed"} == {k: v for k, v in first.items() if k != "replayed"}
        streamed = _stream_chat(alice, body)
        assert [kind for kind, _ in streamed] == ["token", "done"] and streamed[1][1]["response"] == "Four runs a week."
        assert len(llm_server.requests) == 1, "the model was asked once"
        rows = postgres_conn.execute(
            "select c.id, count(m.id) from memory.conversations as c"
            " left join memory.messages as m on m.conversation_id = c.id where c.user_id = %s group by c.id",
            [alice.id]).fetchall()
        assert [(str(r[0]), r[1]) for r in rows] == [(first["session_id"], 2)], "one session, one turn"

        llm_server.enqueue(chat_completion("Bob's own answer."))
        theirs = bob.http.post("/chat", json=body).json()
        assert (theirs["replayed"], theirs["response"]) == (False, "Bob's own answer.")


def test_two_copies_of_a_chat_at_once_store_one_turn(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """A copy sent while the first is still waiting for the model: the copy's turn is stored, and the
    first, finding its client_turn_id taken when it stores, answers with that turn and deletes the
    session it started."""
    for served in serve(database_url, postgres_conn, llm=_model(llm_server)):
        alice = served.person()
        body = {"message": "Plan my running week", "client_turn_id": "turn-1"}
        copy: dict[str, Any] = {}

        def send_copy(person: Person = alice, copy: dict[str, Any] = copy, body: dict[str, Any] = body) -> None:
            with httpx.Client(base_url=str(person.http.base_url), headers=person.http.headers) as client:
                copy.update(client.post("/chat", json=body).json())

        llm_server.enqueue(Scripted(body=chat_completion("The first answer.").body, during=send_copy),
                           chat_completion("The copy's answer."))
        first = alice.http.post("/chat", json=body)
        assert first.status_code == 200, first.text
        assert (copy["replayed"], copy["response"]) == (False, "The copy's answer.")
        assert (first.json()["replayed"], first.json()["response"], first.json()["session_id"]) == (
            True, "The copy's answer.", copy["session_id"])
        rows = postgres_conn.execute(
            "select c.id, count(m.id) from memory.conversations as c"
            " left join memory.messages as m on m.conversation_id = c.id where c.user_id = %s group by c.id",
            [alice.id]).fetchall()
        assert [(str(r[0]), r[1]) for r in rows] == [(copy["session_id"], 2)], "the first's session is gone"
