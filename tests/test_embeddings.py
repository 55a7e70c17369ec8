"""The embeddings client over real HTTP (a scripted loopback server), the offline provider, and
the worker's embed jobs end to end against the database: every row embedded, a model change
re-embedding everything, a server of the wrong dimensions writing nothing, a text the server
refuses kept as a refusal while the user's other rows get their vectors."""

from __future__ import annotations

import json
import logging
import math
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from job_helpers import JobKit
from llm_server import Scripted, ScriptedLLMServer, llm_server  # noqa: F401 (fixture)

from jobs.embeddings import (
    OFFLINE_EMBEDDING_MODEL,
    EmbeddingClient,
    EmbeddingDimensionError,
    OfflineEmbeddings,
    Refused,
)
from jobs.llm import LLMBadResponse, LLMClient, LLMConfigError, LLMRequestError, LLMSettings
from jobs.transport import PsycopgTransport
from jobs.worker import Worker
from supamem import ConversationMemoryManager, Database

FOUR_TURNS = [
    ("I live in Berlin and I want to run a marathon.", "That's a great goal."),
    ("My sister is called Ana.", "Nice!"),
    ("I love green tea.", "Noted."),
    ("I decided to learn Portuguese.", "Boa sorte!"),
]


def _settings(base_url: str, **extra: Any) -> LLMSettings:
    return LLMSettings(provider="openai", base_url=base_url, api_key="test-key", env_prefix="SUPAMEM_EMBEDDING", **extra)


#: OpenAI's answer to a text past the model's input.
TOO_LONG = "This model's maximum context length is 8192 tokens, however you requested 9000 tokens."


def _too_long() -> Scripted:
    return Scripted(400, {"error": {"message": TOO_LONG, "type": "invalid_request_error", "code": None}})


def _answer(texts: list[str], dimensions: int, *, reverse: bool = False) -> Scripted:
    data = [{"object": "embedding", "index": i, "embedding": [float(i + 1)] * dimensions} for i in range(len(texts))]
    return Scripted(200, {"object": "list", "data": data[::-1] if reverse else data, "model": "m"})


# --- the client over HTTP -------------------------------------------------------------------------


def test_texts_go_in_batches_and_come_back_in_input_order(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    texts = [f"text {i}" for i in range(70)]
    llm_server.enqueue(_answer(texts[:64], 4, reverse=True), _answer(texts[64:], 4))
    with EmbeddingClient(_settings(llm_server.base_url)) as client:
        vectors = client.embed(texts, model="m", dimensions=4)
    assert [r.path for r in llm_server.requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert [len(r.json["input"]) for r in llm_server.requests] == [64, 6]
    assert llm_server.requests[0].json["model"] == "m"
    assert llm_server.requests[0].headers["authorization"] == "Bearer test-key"
    assert vectors[0] == [1.0] * 4 and vectors[63] == [64.0] * 4 and vectors[64] == [1.0] * 4


def test_a_text_refused_on_its_own_comes_back_refused_beside_the_others_vectors(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    texts = ["a", "b", "my whole diary", "d"]
    # The batch is refused, then halved until the refused text stands alone.
    llm_server.enqueue(_too_long(), _answer(texts[:2], 3), _too_long(), _too_long(), _answer(texts[3:], 3))
    with EmbeddingClient(_settings(llm_server.base_url)) as client:
        rows = client.embed_rows(texts, model="m", dimensions=3)
    assert [r.json["input"] for r in llm_server.requests] == [texts, texts[:2], texts[2:], texts[2:3], texts[3:]]
    assert rows[:2] == [[1.0] * 3, [2.0] * 3] and rows[3] == [1.0] * 3
    assert isinstance(rows[2], Refused)
    assert rows[2].reason.startswith("HTTP 400: ") and TOO_LONG in rows[2].reason


def test_a_server_that_refuses_every_text_raises_and_refuses_no_row(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(_too_long(), _too_long(), _too_long())
    with EmbeddingClient(_settings(llm_server.base_url)) as client, pytest.raises(LLMRequestError) as caught:
        client.embed_rows(["a", "b"], model="m", dimensions=3)
    assert caught.value.status == 400
    assert len(llm_server.requests) == 3


def test_a_rejected_key_is_not_taken_for_bad_rows(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(401, {"error": {"message": "Incorrect API key provided"}}))
    with EmbeddingClient(_settings(llm_server.base_url)) as client, pytest.raises(LLMRequestError) as caught:
        client.embed_rows(["a", "b"], model="m", dimensions=3)
    assert caught.value.status == 401
    assert len(llm_server.requests) == 1


def test_rate_limits_and_server_errors_are_retried_as_the_llm_client_does(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(
        Scripted(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "2"}),
        Scripted(500, {"error": {"message": "oops"}}),
        _answer(["a"], 3),
    )
    slept: list[float] = []
    with EmbeddingClient(_settings(llm_server.base_url, max_retries=3), sleep=slept.append) as client:
        assert client.embed(["a"], model="m", dimensions=3) == [[1.0, 1.0, 1.0]]
    assert len(llm_server.requests) == 3
    assert slept[0] == 2.0 and 0 < slept[1] <= 1.0


def test_a_bad_key_is_not_retried_and_names_the_variable(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(401, {"error": {"message": "bad key"}}))
    with EmbeddingClient(_settings(llm_server.base_url)) as client, pytest.raises(LLMRequestError) as caught:
        client.embed(["a"], model="m", dimensions=3)
    assert "SUPAMEM_EMBEDDING_API_KEY" in str(caught.value) and len(llm_server.requests) == 1


def test_vectors_of_other_dimensions_are_a_clear_error(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(_answer(["a"], 5))
    with EmbeddingClient(_settings(llm_server.base_url)) as client, pytest.raises(EmbeddingDimensionError) as caught:
        client.embed(["a"], model="m", dimensions=3)
    assert "returned 5 dimensions, but the database expects 3" in str(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        {"data": []},
        {"data": [{"index": 0, "embedding": [1, "x", 3]}]},
        {"data": [{"index": 7, "embedding": [1, 2, 3]}]},
        {"object": "list"},
    ],
    ids=["wrong count", "not numbers", "bad index", "no data"],
)
def test_unusable_answers_are_refused(llm_server: ScriptedLLMServer, body: dict[str, Any]) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(200, body))
    with EmbeddingClient(_settings(llm_server.base_url)) as client, pytest.raises(LLMBadResponse):
        client.embed(["a"], model="m", dimensions=3)


def test_the_provider_and_the_databases_model_must_agree(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    with EmbeddingClient(LLMSettings(provider="offline")) as offline, pytest.raises(LLMConfigError):
        offline.embed(["a"], model="text-embedding-3-small", dimensions=1536)
    with EmbeddingClient(_settings(llm_server.base_url)) as remote, pytest.raises(LLMConfigError) as caught:
        remote.embed(["a"], model=OFFLINE_EMBEDDING_MODEL, dimensions=384)
    assert "memory.set_embedding_model" in str(caught.value) and llm_server.requests == []


def test_settings_come_from_the_embedding_variables() -> None:
    client = EmbeddingClient.from_env(
        {"SUPAMEM_EMBEDDING_PROVIDER": "openai", "SUPAMEM_EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1",
         "SUPAMEM_EMBEDDING_API_KEY": "k", "SUPAMEM_LLM_PROVIDER": "offline"}
    )
    assert client.settings.provider == "openai" and client.settings.base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(LLMConfigError) as caught:
        EmbeddingClient.from_env({"SUPAMEM_EMBEDDING_TIMEOUT": "-1"})
    assert "SUPAMEM_EMBEDDING_TIMEOUT" in str(caught.value)


def test_queries_and_documents_get_their_prefixes(llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    environ = {"SUPAMEM_EMBEDDING_PROVIDER": "openai", "SUPAMEM_EMBEDDING_BASE_URL": llm_server.base_url,
               "SUPAMEM_EMBEDDING_API_KEY": "k", "SUPAMEM_EMBEDDING_QUERY_PREFIX": "query: ",
               "SUPAMEM_EMBEDDING_DOCUMENT_PREFIX": "passage: "}
    llm_server.enqueue(_answer(["a", "b"], 2), _answer(["c"], 2), _answer(["d"], 2))
    with EmbeddingClient.from_env(environ) as client:
        client.embed(["I run", "by the river"], model="e5", dimensions=2)
        client.embed(["where do I run?"], model="e5", dimensions=2, purpose="query")
    with EmbeddingClient.from_env({**environ, "SUPAMEM_EMBEDDING_QUERY_PREFIX": ""}) as plain:
        plain.embed(["where do I run?"], model="e5", dimensions=2, purpose="query")
    assert [r.json["input"] for r in llm_server.requests] == [
        ["passage: I run", "passage: by the river"], ["query: where do I run?"], ["where do I run?"]
    ]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(min_value=1, max_value=512))
def test_offline_vectors_are_deterministic_unit_vectors(text: str, dimensions: int) -> None:
    vector = OfflineEmbeddings.vector(text, dimensions)
    assert len(vector) == dimensions
    assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-9)
    assert OfflineEmbeddings.vector(text, dimensions) == vector


def test_offline_vectors_put_texts_that_share_words_nearer() -> None:
    def cosine(a: str, b: str) -> float:
        return sum(x * y for x, y in zip(OfflineEmbeddings.vector(a, 384), OfflineEmbeddings.vector(b, 384), strict=True))

    assert cosine("I love green tea", "green teas") > cosine("I love green tea", "a marathon in Berlin")


# --- embed jobs against the database --------------------------------------------------------------


class EmbeddingServer:
    """`POST /v1/embeddings` on loopback answering every input with a vector of `dimensions`
    (the offline provider's, so texts sharing words are near), counting the texts it embedded.
    A request holding a text `refuse` picks gets OpenAI's HTTP 400 for a text past the model's input."""

    def __init__(self, dimensions: int, refuse: Callable[[str], bool] = lambda text: False) -> None:
        self.dimensions = dimensions
        self.texts: list[str] = []
        self.refused: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if any(refuse(t) for t in body["input"]):
                    server.refused.extend(body["input"])
                    status, answer = 400, {"error": {"message": TOO_LONG, "type": "invalid_request_error"}}
                else:
                    server.texts.extend(body["input"])
                    data = [{"index": i, "embedding": OfflineEmbeddings.vector(t, server.dimensions)}
                            for i, t in enumerate(body["input"])]
                    status, answer = 200, {"object": "list", "data": data, "model": body["model"]}
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _embed(kit: JobKit, database_url: str, embedder: EmbeddingClient) -> Any:
    transport = PsycopgTransport.from_url(database_url, max_size=2)
    try:
        return Worker(transport, LLMClient(LLMSettings(provider="offline")), kinds=["embed"],
                      user_ids=[str(u) for u in kit.users], embedder=embedder).run(once=True)
    finally:
        transport.close()


def _vectors(kit: JobKit, user_id: uuid.UUID) -> list[dict[str, Any]]:
    return kit.rows(
        "select 'message' as kind, message_id::text as id, model from memory_private.message_embeddings where user_id = %s"
        " union all select 'memory', memory_id::text, model from memory_private.memory_embeddings where user_id = %s",
        [user_id, user_id],
    )


def test_the_worker_embeds_every_message_and_memory_and_search_finds_them(kit: JobKit, database_url: str) -> None:
    user_id, profile_id = kit.user()
    conversation_id = kit.conversation(user_id, profile_id, FOUR_TURNS)
    kit.value("select memory_id from memory.remember('Drinks matcha', 'preference', %s)", [user_id])
    assert [j["status"] for j in kit.jobs("embed")] == ["queued"]  # the memory's trigger; the messages' scan follows

    summary = _embed(kit, database_url, EmbeddingClient(LLMSettings(provider="offline")))

    assert summary.counts[("embed", "done")] >= 1
    vectors = _vectors(kit, user_id)
    assert sorted(v["kind"] for v in vectors) == ["memory"] + ["message"] * 8
    assert {v["model"] for v in vectors} == {OFFLINE_EMBEDDING_MODEL}
    assert [j["status"] for j in kit.jobs("embed")] == ["done"]
    query = OfflineEmbeddings.vector("green teas", 384)
    found = kit.rows(
        "select content from memory.search_messages('beverage', %s, %s, 1, p_query_embedding => %s::extensions.vector)",
        [user_id, conversation_id, str(query)],
    )
    assert found == [{"content": "I love green tea."}]


def test_a_model_change_re_embeds_every_row_through_the_queue(kit: JobKit, database_url: str) -> None:
    user_id, profile_id = kit.user()
    kit.conversation(user_id, profile_id, FOUR_TURNS[:2])
    _embed(kit, database_url, EmbeddingClient(LLMSettings(provider="offline")))
    assert {v["model"] for v in _vectors(kit, user_id)} == {OFFLINE_EMBEDDING_MODEL}

    server = EmbeddingServer(8)
    try:
        name = _changed_model(kit)
        assert [j["status"] for j in kit.jobs("embed")] == ["queued"]
        _embed(kit, database_url, EmbeddingClient(_settings(server.base_url)))
    finally:
        server.close()
        _restore_model(kit)
    assert len(server.texts) == 4
    assert {v["model"] for v in _vectors(kit, user_id)} == {name}


def test_a_server_of_other_dimensions_writes_nothing_and_stops_the_worker(kit: JobKit, database_url: str) -> None:
    user_id, profile_id = kit.user()
    kit.conversation(user_id, profile_id, FOUR_TURNS[:1])
    server = EmbeddingServer(5)
    try:
        _changed_model(kit)
        summary = _embed(kit, database_url, EmbeddingClient(_settings(server.base_url)))
    finally:
        server.close()
        _restore_model(kit)
    assert summary.fatal and "returned 5 dimensions" in summary.fatal
    assert _vectors(kit, user_id) == []
    (job,) = kit.jobs("embed")
    assert job["status"] == "queued" and job["attempts"] == 0  # handed back, no attempt spent


def test_a_text_the_server_refuses_keeps_the_refusal_and_the_users_other_rows_get_vectors(
    kit: JobKit, database_url: str
) -> None:
    user_id, profile_id = kit.user()
    server = EmbeddingServer(8, refuse=lambda text: "my whole diary" in text)
    try:
        name = _changed_model(kit)
        conversation_id = kit.conversation(
            user_id, profile_id, [*FOUR_TURNS[:2], ("Here is my whole diary", "Thank you for sharing it.")]
        )
        diary, thanks = (kit.value(
            "select id from memory.messages where conversation_id = %s and turn_number = 3 and role = %s",
            [conversation_id, role],
        ) for role in ("user", "assistant"))
        summary = _embed(kit, database_url, EmbeddingClient(_settings(server.base_url)))
        assert summary.counts[("embed", "done")] == 1
        # The answer is embedded with the end of its question, so the server refuses it too.
        refusals = kit.rows(
            "select message_id, refused from memory_private.message_embeddings where user_id = %s and refused is not null"
            " order by message_id",
            [user_id],
        )
        assert [r["message_id"] for r in refusals] == [diary, thanks]
        assert all(r["refused"].startswith("HTTP 400: ") and TOO_LONG in r["refused"] for r in refusals)
        assert {v["model"] for v in _vectors(kit, user_id)} == {name}
        assert kit.value(
            "select count(*) from memory_private.message_embeddings where user_id = %s and embedding is not null",
            [user_id],
        ) == 4
        (job,) = kit.jobs("embed")
        assert (job["status"], job["result"]["stored"], job["result"]["refused"]) == ("done", 4, 2)

        # Not sent again: nothing waits. An edit tries the message (and the answer after it) again.
        sent = len(server.texts) + len(server.refused)
        kit.conn.execute("update memory.messages set content = 'Here is my diary, in short' where id = %s", [diary])
        _embed(kit, database_url, EmbeddingClient(_settings(server.base_url)))
        assert len(server.texts) == sent - len(server.refused) + 2
        assert kit.value(
            "select count(*) from memory_private.message_embeddings where user_id = %s and embedding is not null",
            [user_id],
        ) == 6
    finally:
        server.close()
        _restore_model(kit)


def test_a_server_that_refuses_every_text_refuses_no_row(kit: JobKit, database_url: str) -> None:
    user_id, profile_id = kit.user()
    server = EmbeddingServer(8, refuse=lambda text: True)
    try:
        _changed_model(kit)
        kit.conversation(user_id, profile_id, FOUR_TURNS[:1])
        _embed(kit, database_url, EmbeddingClient(_settings(server.base_url)))
    finally:
        server.close()
        _restore_model(kit)
    assert _vectors(kit, user_id) == []
    (job,) = kit.jobs("embed")
    # Refused for its input: sent again it would be refused again, so it is dead at once (and an
    # embed job is queued again an hour after it died).
    assert (job["status"], job["attempts"]) == ("dead", 1)
    assert TOO_LONG in job["last_error"]


def test_texts_are_sent_cut_at_embedding_max_chars(kit: JobKit, database_url: str) -> None:
    user_id, profile_id = kit.user()
    server = EmbeddingServer(8)
    long_answer = "A long answer. " * 1000
    try:
        _changed_model(kit)
        kit.conversation(user_id, profile_id, [("Tell me everything", long_answer)])
        _embed(kit, database_url, EmbeddingClient(_settings(server.base_url)))
    finally:
        server.close()
        _restore_model(kit)
    limit = int(kit.value("select value #>> '{}' from memory_private.settings where key = 'embedding_max_chars'"))
    assert len(long_answer) > limit
    assert max(len(t) for t in server.texts) == limit
    assert len(_vectors(kit, user_id)) == 2


def _changed_model(kit: JobKit) -> str:
    """An 8-dimensional model made current (as service_role), queueing every user's rows."""
    name = f"loopback-{uuid.uuid4().hex[:8]}"
    kit.conn.execute("set role service_role")
    try:
        kit.conn.execute("select memory.set_embedding_model(%s, 8)", [name])
    finally:
        kit.conn.execute("reset role")
    return name


def _restore_model(kit: JobKit) -> None:
    """The default model again, without queueing every user's rows a second time."""
    kit.conn.execute(
        "update memory_private.settings set value = case key when 'embedding_model' then %s::jsonb else '384' end"
        " where key in ('embedding_model', 'embedding_dimensions')",
        [json.dumps(OFFLINE_EMBEDDING_MODEL)],
    )


def test_the_session_manager_embeds_its_query_and_goes_on_lexically_without_it(
    kit: JobKit, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = EmbeddingServer(8)
    db = Database(database_url, min_size=1, max_size=2)
    embedder = EmbeddingClient(_settings(server.base_url, max_retries=0), query_prefix="query: ")
    try:
        _changed_model(kit)
        manager = ConversationMemoryManager(db, embedder=embedder)
        user = f"jobs-{kit.label}-{uuid.uuid4().hex[:12]}"
        session = manager.create_session(user)
        kit.users.append(kit.value("select id from memory.users where external_id = %s", [user]))
        manager.store_turn(session, user, "Show me red shoes", "Here are 3 red shoes.")
        context = manager.get_context_for_query(session, "tell me more about the first one")
        assert server.texts == ["query: tell me more about the first one"]
        assert context.referenced_turn is not None and not context.degraded
        server.close()
        with caplog.at_level(logging.WARNING, logger="supamem"):
            context = manager.get_context_for_query(session, "the first one")
        assert context.referenced_turn is not None and not context.degraded and len(context.history) == 1
        assert "no query embedding" in caplog.text and "searching lexically" in caplog.text
    finally:
        server.close()
        _restore_model(kit)
        db.close()
