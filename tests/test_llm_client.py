"""jobs.llm against a scripted OpenAI-compatible server on loopback: request shape, parsing,
corrective retries, backoff and Retry-After, typed errors, usage. Nothing here really sleeps:
the client's `sleep` is a recorder, and timeouts use a 0.5 s client timeout."""

from __future__ import annotations

import json
import math
import random
import socket
import time
import uuid
from email.utils import formatdate
from typing import Any

import pytest
from llm_server import Scripted, ScriptedLLMServer, chat_completion, llm_server, sse_chunks  # noqa: F401 (fixture)

from jobs.llm import (
    LLMBadResponse,
    LLMClient,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMRateLimited,
    LLMRequestError,
    LLMServerError,
    LLMSettings,
    LLMTimeout,
    parse_retry_after,
)
from jobs.prompts import build_prompt
from jobs.schemas import OUTPUT_MODELS, ExtractionOutput, TitleOutput, strict_json_schema

MESSAGES = [
    {"role": "system", "content": "Write a title."},
    {"role": "user", "content": "I want to plan a trip to Japan."},
]
CORRECTION_START = "Your previous answer was not valid JSON for the schema: "
CORRECTION_END = ". Answer again with only the JSON."


class Client:
    """An LLMClient pointed at the scripted server, with a recording `sleep`."""

    def __init__(self, server: ScriptedLLMServer, **settings: Any) -> None:
        self.sleeps: list[float] = []
        options = {
            "provider": "openai",
            "base_url": server.base_url,
            "api_key": "sk-test-123",
            "timeout": 5.0,
            "max_retries": 4,
            **settings,
        }
        self.llm = LLMClient(LLMSettings(**options), sleep=self.sleeps.append, rng=random.Random(7))

    def title(self, **kwargs: Any):
        return self.llm.complete(MESSAGES, TitleOutput, name="supamem_title_test", **kwargs)


@pytest.fixture
def make_client(llm_server: ScriptedLLMServer):  # noqa: F811
    """Clients on the scripted server with the given settings; closed after the test."""
    made: list[Client] = []

    def make(**settings: Any) -> Client:
        made.append(Client(llm_server, **settings))
        return made[-1]

    yield make
    for c in made:
        c.llm.close()
    assert llm_server.unexpected == [], "the client sent more requests than were scripted"
    assert llm_server.pending == 0, "the client sent fewer requests than were scripted"


@pytest.fixture
def client(make_client) -> Client:
    return make_client()


# --- the happy path --------------------------------------------------------------------------------------


def test_request_shape_parsed_value_and_usage(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(chat_completion({"title": "Planning a trip to Japan"}))

    result = client.title()

    assert result.value == TitleOutput(title="Planning a trip to Japan")
    assert result.attempts == 1
    assert result.usage.model_dump() == {
        "prompt_tokens": 11,
        "completion_tokens": 7,
        "total_tokens": 18,
        "model": "gpt-4o-mini-2024-07-18",
        "provider": "openai",
        "estimated": False,
        "prompt": "supamem_title_test",
    }
    json.dumps(result.usage.model_dump())  # what memory.finish_*(p_usage) receives
    assert client.sleeps == []

    (request,) = llm_server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test-123"
    assert request.headers["content-type"] == "application/json"
    body = request.json
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"] == MESSAGES
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "supamem_title_test", "strict": True, "schema": strict_json_schema(TitleOutput)},
    }
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["title"]


def test_extraction_operations_parse_into_the_union(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    memory_id = uuid.uuid4()
    answer = {
        "operations": [
            {"op": "add", "content": "Wants to run a marathon", "type": "goal", "confidence": 0.9,
             "category": "fitness", "context": [{"key": "due", "value": "March"}]},
            {"op": "update", "memory_id": str(memory_id), "content": "Lives in Berlin", "type": None,
             "confidence": None, "category": None},
            {"op": "none"},
        ]
    }
    llm_server.enqueue(chat_completion(answer))

    result = client.llm.complete(MESSAGES, ExtractionOutput, name="supamem_extract_test")

    assert [op.op for op in result.value.operations] == ["add", "update", "none"]
    assert result.value.to_operations() == [
        {"op": "add", "content": "Wants to run a marathon", "type": "goal", "confidence": 0.9,
         "category": "fitness", "context": {"due": "March"}},
        {"op": "update", "memory_id": str(memory_id), "content": "Lives in Berlin"},
        {"op": "none"},
    ]


def test_no_api_key_sends_no_authorization(llm_server: ScriptedLLMServer, make_client) -> None:  # noqa: F811
    """Local servers (Ollama, vLLM, llama.cpp) need no key."""
    c = make_client(api_key=None)
    llm_server.enqueue(chat_completion({"title": "Hi"}))
    assert c.title().value.title == "Hi"
    assert "authorization" not in llm_server.requests[0].headers


def test_a_fenced_json_answer_is_accepted(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(chat_completion('```json\n{"title": "Fenced"}\n```'))
    assert client.title().value.title == "Fenced"


# --- bad answers: one corrective retry ----------------------------------------------------------------------


def test_malformed_json_then_valid_sends_one_correction(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(chat_completion('{"title": "Japan'), chat_completion({"title": "Japan trip"}))

    result = client.title()

    assert result.value.title == "Japan trip"
    assert result.attempts == 2
    assert client.sleeps == []  # a bad answer is asked again at once
    first, second = (r.json["messages"] for r in llm_server.requests)
    assert first == MESSAGES
    assert second[:2] == MESSAGES
    assert second[2] == {"role": "assistant", "content": '{"title": "Japan'}
    correction = second[3]
    assert correction["role"] == "user"
    assert correction["content"].startswith(CORRECTION_START)
    assert correction["content"].endswith(CORRECTION_END)
    assert "JSON" in correction["content"][len(CORRECTION_START):]
    # Usage covers both answers.
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.total_tokens) == (22, 14, 36)


def test_malformed_twice_raises_bad_response_with_an_excerpt(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(chat_completion("Sure! Here is your title: Japan"), chat_completion("Japan, again not JSON"))

    with pytest.raises(LLMBadResponse) as caught:
        client.title()

    assert caught.value.attempts == 2
    assert "Japan, again not JSON" in caught.value.excerpt
    assert "Japan, again not JSON" in str(caught.value)
    assert len(llm_server.requests) == 2


SCHEMA_INVALID = {
    "wrong type": (TitleOutput, {"title": 5}, "title"),
    "extra field": (TitleOutput, {"title": "Japan", "emoji": "x"}, "emoji"),
    "missing field": (TitleOutput, {}, "title"),
    "too long": (TitleOutput, {"title": "x" * 81}, "80"),
    "blank": (TitleOutput, {"title": "   "}, "title"),
    "four operations": (ExtractionOutput, {"operations": [{"op": "none"}] * 4}, "operations"),
    "unknown op": (ExtractionOutput, {"operations": [{"op": "merge"}]}, "merge"),
    "unknown memory type": (
        ExtractionOutput,
        {"operations": [{"op": "add", "content": "x", "type": "hobby", "confidence": 0.5, "category": None, "context": []}]},
        "type",
    ),
    "confidence above 1": (
        ExtractionOutput,
        {"operations": [{"op": "add", "content": "x", "type": "fact", "confidence": 1.5, "category": None, "context": []}]},
        "confidence",
    ),
    "not a uuid": (
        ExtractionOutput,
        {"operations": [{"op": "delete", "memory_id": "memory-1"}]},
        "memory_id",
    ),
}


@pytest.mark.parametrize("case", SCHEMA_INVALID, ids=list(SCHEMA_INVALID))
def test_schema_invalid_twice_raises_after_a_correction(
    case: str, client: Client, llm_server: ScriptedLLMServer  # noqa: F811
) -> None:
    output, answer, mentioned = SCHEMA_INVALID[case]
    llm_server.enqueue(chat_completion(answer), chat_completion(answer))

    with pytest.raises(LLMBadResponse) as caught:
        client.llm.complete(MESSAGES, output, name="supamem_schema_test")

    assert len(llm_server.requests) == 2
    correction = llm_server.requests[1].json["messages"][-1]["content"]
    assert correction.startswith(CORRECTION_START) and correction.endswith(CORRECTION_END)
    assert mentioned in correction
    assert mentioned in caught.value.error


def test_schema_invalid_then_valid_succeeds(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(chat_completion({"title": "Japan", "extra": True}), chat_completion({"title": "Japan"}))
    result = client.title()
    assert result.value.title == "Japan"
    assert result.attempts == 2


def test_missing_choices_gets_a_correction_without_an_echo(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(200, {"id": "x", "object": "chat.completion", "choices": []}), chat_completion({"title": "Ok"}))

    assert client.title().value.title == "Ok"

    second = llm_server.requests[1].json["messages"]
    assert len(second) == len(MESSAGES) + 1  # nothing to echo back as the assistant's answer
    assert "no choices" in second[-1]["content"]


def test_a_refusal_twice_is_a_bad_response(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(*[chat_completion(None, refusal="I can't help with that.")] * 2)
    with pytest.raises(LLMBadResponse, match="refused"):
        client.title()


def test_a_non_json_body_is_a_bad_response(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    html = Scripted(200, "<html>proxy login</html>", headers={"Content-Type": "text/html"})
    llm_server.enqueue(html, html)
    with pytest.raises(LLMBadResponse) as caught:
        client.title()
    assert "proxy login" in caught.value.excerpt
    assert caught.value.attempts == 2
    second = llm_server.requests[1].json["messages"]
    assert second[:-1] == MESSAGES and second[-1]["content"].startswith(CORRECTION_START)


def test_check_rejections_are_corrected_like_schema_errors(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    def no_shouting(value: TitleOutput) -> None:
        if value.title.isupper():
            raise ValueError("title must not be all capitals")

    llm_server.enqueue(chat_completion({"title": "JAPAN"}), chat_completion({"title": "Japan"}))
    assert client.title(check=no_shouting).value.title == "Japan"
    assert "title must not be all capitals" in llm_server.requests[1].json["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("operations", "error"),
    [
        ([{"op": "delete", "memory_id": "{other}"}], "is not one of the existing_memories ids"),
        ([{"op": "update", "memory_id": "{known}", "content": "Lives in Porto", "type": None, "confidence": None,
           "category": None}, {"op": "delete", "memory_id": "{known}"}], "is named by more than one operation"),
    ],
    ids=["unknown id", "one memory twice"],
)
def test_an_extraction_naming_a_memory_it_may_not_is_corrected(
    client: Client, llm_server: ScriptedLLMServer, operations: list[dict[str, Any]], error: str,  # noqa: F811
) -> None:
    """The extraction's check: an update or delete only of a memory the model was shown, each at
    most once (a second operation on one memory fails the whole answer in memory.finish_extraction,
    losing its other operations)."""
    known, other = str(uuid.uuid4()), str(uuid.uuid4())
    job_input = {"kind": "extract", "user_message": "I moved to Porto",
                 "existing_memories": [{"id": known, "content": "Lives in Berlin", "type": "fact"}]}
    prompt = build_prompt(job_input)
    bad = [{k: (v.format(known=known, other=other) if k == "memory_id" else v) for k, v in op.items()} for op in operations]
    good = [{"op": "delete", "memory_id": known}]
    llm_server.enqueue(chat_completion({"operations": bad}), chat_completion({"operations": good}))

    result = client.llm.complete(prompt.messages, prompt.output, name=prompt.name, check=prompt.check)

    assert result.value.to_operations() == good
    assert error in llm_server.requests[1].json["messages"][-1]["content"]


# --- transient failures: backoff and Retry-After -----------------------------------------------------------


def test_429_with_retry_after_seconds_waits_exactly_that(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(429, {"error": {}}, headers={"Retry-After": "2"}), chat_completion({"title": "Ok"}))

    result = client.title()

    assert result.value.title == "Ok"
    assert client.sleeps == [2.0]
    assert result.attempts == 2


def test_429_with_an_http_date_retry_after(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    sent = time.time()
    when = math.floor(sent) + 5  # an HTTP date has whole seconds
    headers = {"Retry-After": formatdate(when, usegmt=True)}
    llm_server.enqueue(Scripted(429, {"error": {}}, headers=headers), chat_completion({"title": "Ok"}))

    client.title()

    answered = time.time()
    (delay,) = client.sleeps
    # Counted to that date from the moment the answer was read, somewhere between these two.
    assert when - answered <= delay <= when - sent


def test_429_without_retry_after_backs_off(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(429, {"error": {}}), chat_completion({"title": "Ok"}))
    client.title()
    (delay,) = client.sleeps
    assert 0.25 <= delay <= 0.5


def test_503_with_retry_after_is_honoured(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(503, "busy", headers={"Retry-After": "1"}), chat_completion({"title": "Ok"}))
    client.title()
    assert client.sleeps == [1.0]


def test_500_502_503_then_success_with_growing_backoff(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(500, "oops"), Scripted(502, "bad gateway"), Scripted(503, "unavailable"),
                       chat_completion({"title": "Ok"}))

    result = client.title()

    assert result.value.title == "Ok"
    assert result.attempts == 4
    first, second, third = client.sleeps
    assert 0.25 <= first <= 0.5 <= second <= 1.0 <= third <= 2.0  # jitter within [d/2, d], d doubling
    assert first < second < third
    assert [r.json for r in llm_server.requests] == [llm_server.requests[0].json] * 4  # same request again


def test_exhausting_retries_raises_server_error(llm_server: ScriptedLLMServer, make_client) -> None:  # noqa: F811
    c = make_client(max_retries=2)
    llm_server.enqueue(*[Scripted(500, "still broken")] * 3)

    with pytest.raises(LLMServerError) as caught:
        c.title()

    assert caught.value.status == 500
    assert caught.value.attempts == 3
    assert "still broken" in caught.value.excerpt
    assert len(llm_server.requests) == 3
    assert len(c.sleeps) == 2
    assert llm_server.unexpected == []


def test_backoff_is_capped(llm_server: ScriptedLLMServer, make_client) -> None:  # noqa: F811
    c = make_client(max_retries=8, max_backoff=1.0)
    llm_server.enqueue(*[Scripted(500, "")] * 8, chat_completion({"title": "Ok"}))
    c.title()
    assert len(c.sleeps) == 8
    assert max(c.sleeps) <= 1.0


def test_a_retry_after_beyond_the_limit_is_not_waited_out(llm_server: ScriptedLLMServer, make_client) -> None:  # noqa: F811
    c = make_client(max_retry_after=60)
    llm_server.enqueue(Scripted(429, {"error": {}}, headers={"Retry-After": "3600"}))

    with pytest.raises(LLMRateLimited) as caught:
        c.title()

    assert caught.value.retry_after == 3600.0
    assert caught.value.attempts == 1
    assert c.sleeps == []


def test_exhausted_rate_limits_raise_rate_limited(llm_server: ScriptedLLMServer, make_client) -> None:  # noqa: F811
    c = make_client(max_retries=1)
    llm_server.enqueue(*[Scripted(429, {"error": {}}, headers={"Retry-After": "1"})] * 2)
    with pytest.raises(LLMRateLimited) as caught:
        c.title()
    assert caught.value.retry_after == 1.0
    assert c.sleeps == [1.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_are_not_retried(status: int, client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(status, {"error": {"message": "Invalid schema for response_format"}}))

    with pytest.raises(LLMRequestError) as caught:
        client.title()

    assert caught.value.status == status
    assert caught.value.attempts == 1
    assert "Invalid schema" in caught.value.excerpt
    assert len(llm_server.requests) == 1
    assert client.sleeps == []


def test_401_says_which_setting_to_check(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(401, {"error": {"message": "Incorrect API key"}}))
    with pytest.raises(LLMRequestError, match="SUPAMEM_LLM_API_KEY"):
        client.title()


#: A client timeout, and a server answer far later than it: a loaded machine can delay a prompt
#: loopback answer by tens of milliseconds, never by the difference.
TIMEOUT, LATE = 0.5, 5.0


def test_timeouts_raise_llm_timeout_after_retries(llm_server: ScriptedLLMServer, make_client) -> None:  # noqa: F811
    c = make_client(timeout=TIMEOUT, max_retries=2)
    llm_server.enqueue(*[Scripted(200, {"late": True}, delay=LATE)] * 3)

    started = time.monotonic()
    with pytest.raises(LLMTimeout) as caught:
        c.title()

    assert time.monotonic() - started < LATE  # no late answer was waited for
    assert caught.value.attempts == 3
    assert len(c.sleeps) == 2
    assert len(llm_server.requests) == 3


def test_a_timeout_then_success(llm_server: ScriptedLLMServer, make_client) -> None:  # noqa: F811
    c = make_client(timeout=TIMEOUT)
    llm_server.enqueue(Scripted(200, {"late": True}, delay=LATE), chat_completion({"title": "Ok"}))
    result = c.title()
    assert result.value.title == "Ok"
    assert result.attempts == 2
    assert len(c.sleeps) == 1


def test_connection_refused_raises_connection_error_after_retries() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    settings = LLMSettings(provider="openai", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0, max_retries=2)
    with LLMClient(settings, sleep=sleeps.append) as llm:
        with pytest.raises(LLMConnectionError) as caught:
            llm.complete(MESSAGES, TitleOutput, name="t")
    assert caught.value.attempts == 3
    assert len(sleeps) == 2
    assert isinstance(caught.value, LLMError)


# --- usage ----------------------------------------------------------------------------------------------------


def test_missing_usage_is_estimated(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    content = json.dumps({"title": "Japan trip"})
    llm_server.enqueue(chat_completion(content, usage=None))

    usage = client.title().usage

    assert usage.estimated is True
    assert usage.prompt_tokens == math.ceil(sum(len(m["content"]) for m in MESSAGES) / 4)
    assert usage.completion_tokens == math.ceil(len(content) / 4)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


# --- configuration --------------------------------------------------------------------------------------------


def test_settings_defaults() -> None:
    settings = LLMSettings.from_env({})
    assert (settings.provider, settings.base_url, settings.model, settings.timeout, settings.max_retries) == (
        "offline", "https://api.openai.com/v1", "gpt-4o-mini", 30.0, 4,
    )
    assert settings.api_key is None


def test_settings_from_env_and_openai_api_key_fallback() -> None:
    settings = LLMSettings.from_env({
        "SUPAMEM_LLM_PROVIDER": "OpenAI",
        "SUPAMEM_LLM_BASE_URL": "http://127.0.0.1:11434/v1",
        "OPENAI_API_KEY": "sk-fallback",
        "SUPAMEM_LLM_MODEL": "llama3.1",
        "SUPAMEM_LLM_TIMEOUT": "12.5",
        "SUPAMEM_LLM_MAX_RETRIES": "0",
    })
    assert settings.provider == "openai"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-fallback"
    assert (settings.model, settings.timeout, settings.max_retries) == ("llama3.1", 12.5, 0)
    assert "sk-fallback" not in repr(settings)
    own = LLMSettings.from_env({"SUPAMEM_LLM_API_KEY": "sk-own", "OPENAI_API_KEY": "sk-fallback"})
    assert own.api_key is not None and own.api_key.get_secret_value() == "sk-own"


@pytest.mark.parametrize(
    ("environ", "variable"),
    [
        ({"SUPAMEM_LLM_PROVIDER": "anthropic"}, "SUPAMEM_LLM_PROVIDER"),
        ({"SUPAMEM_LLM_TIMEOUT": "soon"}, "SUPAMEM_LLM_TIMEOUT"),
        ({"SUPAMEM_LLM_TIMEOUT": "0"}, "SUPAMEM_LLM_TIMEOUT"),
        ({"SUPAMEM_LLM_MAX_RETRIES": "-1"}, "SUPAMEM_LLM_MAX_RETRIES"),
    ],
)
def test_invalid_settings_name_the_variable(environ: dict[str, str], variable: str) -> None:
    with pytest.raises(LLMConfigError, match=variable):
        LLMSettings.from_env(environ)


def test_openai_without_a_key_is_a_config_error() -> None:
    with pytest.raises(LLMConfigError, match="SUPAMEM_LLM_API_KEY"):
        LLMClient.from_env({"SUPAMEM_LLM_PROVIDER": "openai"})
    with pytest.raises(LLMConfigError, match="SUPAMEM_LLM_BASE_URL"):
        LLMClient.from_env({"SUPAMEM_LLM_PROVIDER": "openai", "SUPAMEM_LLM_BASE_URL": "localhost:11434"})


def test_the_default_client_is_offline() -> None:
    with LLMClient.from_env({}) as llm:
        assert llm.transport.provider == "offline"
        assert llm.model == "supamem-offline"


def test_schema_names_are_checked() -> None:
    with LLMClient.from_env({}) as llm, pytest.raises(ValueError, match="name"):
        llm.complete(MESSAGES, TitleOutput, name="has spaces")


# --- helpers ---------------------------------------------------------------------------------------------------


def test_parse_retry_after() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def _walk(node: Any):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


@pytest.mark.parametrize("kind", OUTPUT_MODELS)
def test_every_output_schema_is_strict_compatible(kind: str) -> None:
    schema = strict_json_schema(OUTPUT_MODELS[kind])
    assert schema["type"] == "object"
    for node in _walk(schema):
        assert not {"oneOf", "discriminator", "default", "format", "const", "minLength", "maxLength",
                    "minimum", "maximum", "maxItems"} & set(node), node
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])


# --- plain replies (the chat endpoint's answer) --------------------------------------------------------------


def test_a_reply_is_the_models_text_with_no_schema(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(Scripted(429, {"error": {}}, headers={"Retry-After": "1"}), chat_completion("Plain words."))

    answer = client.llm.answer([{"role": "user", "content": "Hello"}]).value

    assert answer == "Plain words."
    assert client.sleeps == [1.0], "the same retries and Retry-After as structured calls"
    sent = llm_server.requests[-1].json
    assert "response_format" not in sent and sent["messages"] == [{"role": "user", "content": "Hello"}]


def test_a_reply_without_text_is_a_bad_response(client: Client, llm_server: ScriptedLLMServer) -> None:  # noqa: F811
    llm_server.enqueue(chat_completion(None, refusal="no"))

    with pytest.raises(LLMBadResponse, match="reply: the model refused"):
        client.llm.answer([{"role": "user", "content": "Hello"}])


def test_a_stream_is_retried_until_its_first_piece_and_then_given_as_written(
    client: Client, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    llm_server.enqueue(Scripted(503, {"error": {}}, headers={"Retry-After": "2"}),
                       Scripted(200, chunks=[b": keep-alive\n\n", *sse_chunks("Plain", " words.")]))

    pieces = list(client.llm.stream([{"role": "user", "content": "Hello"}]))

    assert pieces == ["Plain", " words."]
    assert client.sleeps == [2.0], "a failure before the first piece is retried like any request"
    sent = llm_server.requests[-1].json
    assert sent["stream"] is True and "response_format" not in sent
    usage = client.llm.usage([{"role": "user", "content": "Hello"}], "".join(pieces))
    assert usage.estimated and usage.completion_tokens == 3 and usage.prompt == "chat"  # 12 characters / 4


def test_a_stream_that_breaks_after_its_first_piece_raises_where_it_stands(
    client: Client, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    llm_server.enqueue(Scripted(200, chunks=sse_chunks("Half", done=False)))
    pieces = client.llm.stream([{"role": "user", "content": "Hello"}])
    assert next(pieces) == "Half"
    with pytest.raises(LLMBadResponse, match="ended before \\[DONE\\]"):
        next(pieces)
    assert len(llm_server.requests) == 1, "what was given cannot be taken back: no retry"

    llm_server.enqueue(Scripted(200, chunks=[b'data: {"choices": [{"delta": {"refusal": "no"}}]}\n\n']))
    with pytest.raises(LLMBadResponse, match="the model refused"):
        next(client.llm.stream([{"role": "user", "content": "Hello"}]))
    llm_server.enqueue(Scripted(400, {"error": {"message": "bad request"}}))
    with pytest.raises(LLMRequestError):
        next(client.llm.stream([{"role": "user", "content": "Hello"}]))
