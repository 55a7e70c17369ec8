"""The LLM client: OpenAI-compatible chat completions with structured output, typed errors, retries.

One public call, `LLMClient.complete(messages, output, name=...)`, sends the messages with
`response_format = {"type": "json_schema", "json_schema": {"name", "strict": true, "schema"}}`
(the schema made strict-compatible by `jobs.schemas.strict_json_schema`), parses
`choices[0].message.content` as JSON and validates it strictly with the pydantic model. Any server
speaking `POST {base_url}/chat/completions` works by configuration: OpenAI, Gemini's
OpenAI-compatible endpoint, Ollama, vLLM, llama.cpp's server.

Where the request goes is a *transport* (`Transport.chat(payload) -> dict`, a response in OpenAI's
shape): `HTTPTransport` POSTs it; `jobs.offline.OfflineProvider` (the default) computes a
deterministic rule-based answer without any network. Parsing, validation, retries on bad answers
and usage accounting are this module's, the same for both.

Failure policy
- 429, 5xx, connection errors and timeouts are retried up to `max_retries` times per request,
  with exponential backoff and jitter (delay drawn from [d/2, d], d = 0.5 s x 2^retry, capped at
  `max_backoff`), or exactly the server's `Retry-After` (seconds or an HTTP date) on 429 and 503.
  A Retry-After longer than `max_retry_after` is not waited out: LLMRateLimited / LLMServerError
  is raised at once with `retry_after`, so the job queue can reschedule instead of a worker idling.
- Other 4xx are never retried (LLMRequestError): the same request would fail the same way.
- A malformed or schema-invalid answer (or none) is retried once with a corrective follow-up
  message; a second bad answer raises LLMBadResponse with a short excerpt of what came back.

Configuration comes from the environment (`LLMSettings.from_env`):
    SUPAMEM_LLM_PROVIDER     offline (default) | openai
    SUPAMEM_LLM_BASE_URL     default https://api.openai.com/v1
    SUPAMEM_LLM_API_KEY      or OPENAI_API_KEY; optional for local servers (Ollama, vLLM, llama.cpp)
    SUPAMEM_LLM_MODEL        default gpt-4o-mini
    SUPAMEM_LLM_TIMEOUT      seconds, default 30
    SUPAMEM_LLM_MAX_RETRIES  default 4
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, Literal, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from jobs.schemas import strict_json_schema

__all__ = [
    "INPUT_REFUSALS",
    "DEFAULT_BASE_URL",
    "LLMSettings",
    "Usage",
    "Completion",
    "Transport",
    "HTTPTransport",
    "LLMClient",
    "Retry",
    "make_transport",
    "parse_retry_after",
    "LLMError",
    "LLMConfigError",
    "LLMTimeout",
    "LLMConnectionError",
    "LLMRateLimited",
    "LLMServerError",
    "LLMRequestError",
    "LLMBadResponse",
]

log = logging.getLogger("jobs.llm")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BACKOFF_BASE = 0.5  # seconds: the first retry waits 0.25-0.5 s, then 0.5-1 s, 1-2 s, ...
EXCERPT_CHARS = 200
CORRECTION = "Your previous answer was not valid JSON for the schema: {error}. Answer again with only the JSON."

T = TypeVar("T", bound=BaseModel)


# --- errors -------------------------------------------------------------------------------------------


#: What servers answer when the input is the problem (OpenAI 400, text-embeddings-inference 413
#: and 422 for a text past the model's tokens): sent again, the same request is refused again.
#: 401, 403 and 404 are configuration.
INPUT_REFUSALS = frozenset({400, 413, 422})


class LLMError(Exception):
    """Base of every error the client raises. `attempts`: HTTP requests made before it was raised."""

    def __init__(self, message: str, *, attempts: int = 0) -> None:
        super().__init__(message)
        self.attempts = attempts


class LLMConfigError(LLMError):
    """The configuration cannot work (unknown provider, bad URL, missing API key, bad number)."""


class LLMTimeout(LLMError):
    """No answer within the timeout (retried; raised when retries are exhausted)."""


class LLMConnectionError(LLMError):
    """The server could not be reached or dropped the connection (retried like a timeout)."""


class LLMRateLimited(LLMError):
    """HTTP 429. `retry_after`: seconds the server asked to wait, or None if it did not say."""

    def __init__(self, message: str, *, retry_after: float | None = None, attempts: int = 0) -> None:
        super().__init__(message, attempts=attempts)
        self.retry_after = retry_after


class LLMServerError(LLMError):
    """HTTP 5xx. `retry_after` is set when a 503 said when to come back."""

    def __init__(
        self, message: str, *, status: int, retry_after: float | None = None, excerpt: str = "", attempts: int = 0
    ) -> None:
        super().__init__(message, attempts=attempts)
        self.status = status
        self.retry_after = retry_after
        self.excerpt = excerpt


class LLMRequestError(LLMError):
    """HTTP 4xx other than 429 (bad request, bad key, unknown model): never retried."""

    def __init__(self, message: str, *, status: int, excerpt: str = "", attempts: int = 0) -> None:
        super().__init__(message, attempts=attempts)
        self.status = status
        self.excerpt = excerpt


class LLMBadResponse(LLMError):
    """The answer was not usable: not JSON, not valid for the schema, no choices, a refusal.

    `excerpt` is the beginning of what came back, `error` what was wrong with it.
    """

    def __init__(self, message: str, *, excerpt: str = "", error: str = "", attempts: int = 0) -> None:
        super().__init__(message, attempts=attempts)
        self.excerpt = excerpt
        self.error = error


_RETRYABLE = (LLMTimeout, LLMConnectionError, LLMRateLimited, LLMServerError)


def _excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str:
    if text is None:
        return ""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- settings -----------------------------------------------------------------------------------------

_FIELDS = ("provider", "base_url", "api_key", "model", "timeout", "max_retries")


class LLMSettings(BaseModel):
    """How to reach the model. `LLMSettings.from_env()` reads the SUPAMEM_LLM_* variables."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["offline", "openai"] = "offline"
    base_url: str = DEFAULT_BASE_URL
    api_key: SecretStr | None = None  # SecretStr: never shown by repr() or in logs
    model: str = Field("gpt-4o-mini", min_length=1)
    timeout: float = Field(30.0, gt=0, le=3600)
    max_retries: int = Field(4, ge=0, le=20)
    # Not from the environment; tune in code if ever needed.
    max_backoff: float = Field(30.0, gt=0)
    max_retry_after: float = Field(120.0, ge=0)
    # The environment variables' prefix, so errors name the variable to fix (the embeddings
    # client reads the same settings from SUPAMEM_EMBEDDING_*).
    env_prefix: str = "SUPAMEM_LLM"

    def variable(self, field: str) -> str:
        return f"{self.env_prefix}_{field.upper()}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, prefix: str = "SUPAMEM_LLM") -> LLMSettings:
        """Settings from `environ` (default os.environ) under `prefix`; blank variables count as
        unset.

        Raises LLMConfigError naming the variable when a value is invalid.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {"env_prefix": prefix}
        for field in _FIELDS:
            raw = (env.get(f"{prefix}_{field.upper()}") or "").strip()
            if raw:
                values[field] = raw.lower() if field == "provider" else raw
        if "api_key" not in values and (env.get("OPENAI_API_KEY") or "").strip():
            values["api_key"] = env["OPENAI_API_KEY"].strip()
        try:
            return cls(**values)
        except ValidationError as exc:
            problems = []
            for error in exc.errors(include_url=False):
                field = str(error["loc"][0]) if error["loc"] else "?"
                problems.append(f"{prefix}_{field.upper()}: {error['msg']}")
            raise LLMConfigError("invalid configuration: " + "; ".join(problems)) from None

    def check(self) -> None:
        """LLMConfigError if these settings cannot work for their provider."""
        if self.provider != "openai":
            return
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise LLMConfigError(
                f"{self.variable('base_url')} must be an http(s) URL such as {DEFAULT_BASE_URL}, got {self.base_url!r}"
            )
        if self.api_key is None and parts.hostname == "api.openai.com":
            raise LLMConfigError(
                f"{self.variable('api_key')} (or OPENAI_API_KEY) is required for api.openai.com; "
                f"or set {self.variable('provider')}=offline"
            )


# --- results ------------------------------------------------------------------------------------------


class Usage(BaseModel):
    """Token accounting of one `complete` call (all its requests), for `memory.finish_*(p_usage)`.

    `estimated` is true when a response carried no usage and the counts were estimated as
    characters / 4. `prompt` is the schema name, so metrics can be grouped by prompt version.
    """

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    total_tokens: int = Field(0, ge=0)
    model: str
    provider: str
    estimated: bool = False
    prompt: str | None = None


@dataclass(frozen=True)
class Completion(Generic[T]):
    """A validated answer. `attempts` counts HTTP requests (retries and the corrective one included)."""

    value: T
    usage: Usage
    attempts: int


# --- transports -----------------------------------------------------------------------------------------


class Transport(Protocol):
    """Where a chat-completions payload goes. `chat` returns the response body in OpenAI's shape,
    or raises one of the typed errors (LLMTimeout, LLMConnectionError, LLMRateLimited,
    LLMServerError, LLMRequestError, LLMBadResponse)."""

    provider: str  # reported as Usage.provider

    def chat(self, payload: dict[str, Any]) -> dict[str, Any]: ...

    def stream(self, payload: dict[str, Any]) -> Iterator[str]:
        """The answer's text in pieces, as the model writes it (the same typed errors)."""
        ...

    def close(self) -> None: ...


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date (RFC 9110 10.2.3).

    None when absent or unreadable; never negative (a date in the past means now).
    """
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class HTTPTransport:
    """POST {base_url}/chat/completions (and /embeddings) with httpx; HTTP failures become typed
    errors."""

    provider = "openai"

    def __init__(self, settings: LLMSettings, *, client: httpx.Client | None = None) -> None:
        settings.check()
        self.settings = settings
        self.base_url = settings.base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.timeout = settings.timeout
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "supamem-jobs"}
        if settings.api_key is not None:
            headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        self._client = client or httpx.Client(timeout=httpx.Timeout(settings.timeout), follow_redirects=False)
        self._headers = headers

    def chat(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.post(self.url, payload)

    def embeddings(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.post(self.base_url + "/embeddings", payload)

    def post(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The JSON object `url` answers to `payload`, or a typed error."""
        with self._reaching(url):
            response = self._client.post(url, json=payload, headers=self._headers)
        self._check(url, response)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise LLMBadResponse(
                f"the response from {url} is not a JSON object", excerpt=_excerpt(response.text), error="not JSON"
            )
        return body

    def stream(self, payload: dict[str, Any]) -> Iterator[str]:
        """chat/completions with `stream: true`: each server-sent event's content delta, until
        `[DONE]` (a stream that ends without it was cut off: LLMBadResponse)."""
        with self._reaching(self.url), self._client.stream(
            "POST", self.url, json={**payload, "stream": True}, headers=self._headers
        ) as response:
            if not 200 <= response.status_code < 300:
                response.read()
                self._check(self.url, response)
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue  # comments, event names, blank separators
                data = line[len("data:"):].strip()
                if data == "[DONE]":
                    return
                piece = _delta(data)
                if piece:
                    yield piece
        raise LLMBadResponse(f"the stream from {self.url} ended before [DONE]", error="stream cut off")

    @contextmanager
    def _reaching(self, url: str) -> Iterator[None]:
        """httpx's failures to reach `url` as the typed errors."""
        try:
            yield
        except httpx.TimeoutException as exc:
            raise LLMTimeout(f"no answer from {url} within {self.timeout:g} s ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise LLMConnectionError(f"cannot reach {url}: {type(exc).__name__}: {exc}") from exc

    def _check(self, url: str, response: httpx.Response) -> None:
        """An HTTP status other than 2xx as its typed error."""
        status = response.status_code
        if status == 429:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            raise LLMRateLimited(f"rate limited by {url} (HTTP 429)", retry_after=retry_after)
        if status >= 500:
            retry_after = parse_retry_after(response.headers.get("retry-after")) if status == 503 else None
            raise LLMServerError(
                f"server error from {url}: HTTP {status}: {_excerpt(response.text)}",
                status=status,
                retry_after=retry_after,
                excerpt=_excerpt(response.text),
            )
        if not 200 <= status < 300:
            key, base_url = self.settings.variable("api_key"), self.settings.variable("base_url")
            hint = {
                401: f" (check {key})",
                403: f" (check {key} and the model's access)",
                404: f" (check {base_url} and the model)",
            }.get(status, "")
            raise LLMRequestError(
                f"request rejected by {url}: HTTP {status}{hint}: {_excerpt(response.text)}",
                status=status,
                excerpt=_excerpt(response.text),
            )

    def close(self) -> None:
        self._client.close()


def _delta(data: str) -> str | None:
    """The content a streamed chunk (one event's JSON) adds; a refusal or an unreadable chunk is
    LLMBadResponse."""
    try:
        chunk = json.loads(data)
        choice = (chunk.get("choices") or [{}])[0]
        delta = choice.get("delta") or {}
    except (ValueError, AttributeError, IndexError, TypeError):
        raise LLMBadResponse("a streamed chunk is not a chat.completion.chunk", excerpt=_excerpt(data),
                             error="bad chunk") from None
    if delta.get("refusal"):
        raise LLMBadResponse(f"the model refused: {_excerpt(delta['refusal'])}", excerpt=_excerpt(data), error="refusal")
    content = delta.get("content")
    return content if isinstance(content, str) else None


def make_transport(settings: LLMSettings) -> Transport:
    """The transport the settings ask for."""
    if settings.provider == "offline":
        from jobs.offline import OfflineProvider  # imported here: offline imports the prompts

        return OfflineProvider()
    return HTTPTransport(settings)


# --- retries --------------------------------------------------------------------------------------------

R = TypeVar("R")


class Retry:
    """Runs a request again on transient failures (the failure policy above), for every client
    of an OpenAI-compatible server: chat completions here, embeddings in `jobs.embeddings`."""

    def __init__(
        self, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()

    def run(self, request: Callable[[], R], attempts: int = 0) -> tuple[R, int]:
        """`request()`'s answer and the attempts so far (`attempts` before this call included)."""
        retries = 0
        while True:
            attempts += 1
            try:
                return request(), attempts
            except _RETRYABLE as exc:
                delay = self._delay(retries, exc)
                if retries >= self.settings.max_retries or delay is None:
                    exc.attempts = attempts
                    raise
                retries += 1
                log.warning("request failed (%s); retry %d in %.2f s", exc, retries, delay)
                self._sleep(delay)
            except LLMError as exc:
                exc.attempts = attempts
                raise

    def _delay(self, retries: int, exc: LLMError) -> float | None:
        """Seconds before the next try; None when the server asked for longer than we wait."""
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return retry_after if retry_after <= self.settings.max_retry_after else None
        ceiling = min(self.settings.max_backoff, BACKOFF_BASE * 2**retries)
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)


# --- the client -----------------------------------------------------------------------------------------

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FENCED = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


@functools.lru_cache(maxsize=64)
def _schema(output: type[BaseModel]) -> dict[str, Any]:
    return strict_json_schema(output)


class _Unusable(Exception):
    """An answer that came back but cannot be used; carries the text for the excerpt."""

    def __init__(self, error: str, content: str | None, raw: str) -> None:
        super().__init__(error)
        self.error = error
        self.content = content
        self.raw = raw


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False)[:5]:
        where = ".".join(str(p) for p in error["loc"])
        parts.append(f"{where}: {error['msg']}" if where else error["msg"])
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def _content(body: Mapping[str, Any]) -> str:
    raw = json.dumps(body, ensure_ascii=False, default=str)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _Unusable("the response has no choices", None, raw)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _Unusable("the first choice has no message", None, raw)
    if message.get("refusal"):
        raise _Unusable(f"the model refused: {_excerpt(message['refusal'])}", None, raw)
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise _Unusable("the message has no content", None, raw)
    return content


def _parse(content: str, output: type[T], check: Callable[[T], None] | None) -> T:
    """The answer validated strictly as `output` (and by `check`); _Unusable with the reason if not."""
    text = content.strip()
    fenced = _FENCED.match(text)  # some local servers wrap the JSON in a ``` fence anyway
    try:
        value = output.model_validate_json(fenced.group(1) if fenced else text, strict=True)
        if check is not None:
            check(value)
    except ValidationError as exc:
        raise _Unusable(_describe(exc), content, content) from None
    except ValueError as exc:
        raise _Unusable(str(exc) or type(exc).__name__, content, content) from None
    return value


def _chars(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(m.get("content") or "") for m in messages if isinstance(m.get("content"), str))


class LLMClient:
    """Structured completions over a transport (HTTP or offline); see the module docstring.

    `sleep` is what waits between retries (tests pass a recorder); `rng` draws the jitter.
    """

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        transport: Transport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings if settings is not None else LLMSettings.from_env()
        self.transport: Transport = transport if transport is not None else make_transport(self.settings)
        self._retry = Retry(self.settings, sleep=sleep, rng=rng)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **kwargs: Any) -> LLMClient:
        return cls(LLMSettings.from_env(environ), **kwargs)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def model(self) -> str:
        """The model asked for: the transport's own (offline) or the configured one."""
        return getattr(self.transport, "model", None) or self.settings.model

    def complete(
        self,
        messages: list[dict[str, Any]],
        output: type[T],
        *,
        name: str,
        check: Callable[[T], None] | None = None,
    ) -> Completion[T]:
        """Ask for an answer that validates as `output`; return it with its usage.

        `name` names the JSON schema (letters, digits, _ and -, at most 64). `check`, if given,
        runs after validation and may raise ValueError for answers the schema cannot rule out
        (e.g. an id not in the input); that counts as schema-invalid and gets the corrective retry.
        Raises LLMBadResponse, LLMTimeout, LLMConnectionError, LLMRateLimited, LLMServerError,
        LLMRequestError (all LLMError).
        """
        if not _NAME.match(name):
            raise ValueError(f"name must match {_NAME.pattern}, got {name!r}")
        if not messages:
            raise ValueError("messages must not be empty")
        base = {
            "model": self.model,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "strict": True, "schema": _schema(output)},
            },
        }
        conversation = [dict(m) for m in messages]
        attempts = 0
        prompt_tokens = completion_tokens = 0
        estimated = False
        model = self.model
        for answer in (1, 2):  # the first answer, then one corrective retry
            body: dict[str, Any] | None = None
            try:
                try:
                    body, attempts = self._send({**base, "messages": conversation}, attempts)
                except LLMBadResponse as exc:  # a 200 whose body is not a JSON object
                    attempts = exc.attempts
                    raise _Unusable(exc.error or str(exc), None, exc.excerpt) from None
                model = str(body.get("model") or model)
                content = _content(body)
                value = _parse(content, output, check)
            except _Unusable as bad:
                if body is not None:
                    p, c, est = self._usage(body, conversation, bad.content)
                    prompt_tokens, completion_tokens = prompt_tokens + p, completion_tokens + c
                    estimated = estimated or est
                if answer == 2:
                    raise LLMBadResponse(
                        f"{name}: unusable answer after a corrective retry: {bad.error}; "
                        f"it began: {_excerpt(bad.raw)!r}",
                        excerpt=_excerpt(bad.raw),
                        error=bad.error,
                        attempts=attempts,
                    ) from None
                log.warning("%s: unusable answer (%s); asking once more", name, bad.error)
                correction = CORRECTION.format(error=bad.error.rstrip(". "))
                if bad.content is not None:  # echo the bad answer so the model sees what to fix
                    conversation = [*conversation, {"role": "assistant", "content": bad.content}]
                conversation = [*conversation, {"role": "user", "content": correction}]
                continue
            p, c, est = self._usage(body, conversation, content)
            prompt_tokens, completion_tokens = prompt_tokens + p, completion_tokens + c
            usage = Usage(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                total_tokens=prompt_tokens + completion_tokens,
                model=model,
                provider=self.transport.provider,
                estimated=estimated or est,
                prompt=name,
            )
            return Completion(value=value, usage=usage, attempts=attempts)
        raise AssertionError("unreachable")  # pragma: no cover

    def answer(self, messages: list[dict[str, Any]]) -> Completion[str]:
        """A chat answer in plain text (no schema), with its token usage: what the chat endpoint
        says to the user (`prompt` "chat" in the usage).

        The same retries, backoff and Retry-After as `complete`; LLMBadResponse when the answer
        has no text.
        """
        if not messages:
            raise ValueError("messages must not be empty")
        body, attempts = self._send({"model": self.model, "messages": [dict(m) for m in messages]}, 0)
        try:
            text = _content(body)
        except _Unusable as bad:
            raise LLMBadResponse(f"reply: {bad.error}", excerpt=_excerpt(bad.raw), error=bad.error,
                                 attempts=attempts) from None
        return Completion(value=text, usage=self.usage(messages, text, body), attempts=attempts)

    def stream(self, messages: list[dict[str, Any]]) -> Iterator[str]:
        """A chat answer in pieces, as the model writes it. Failures before the first piece are
        retried as `answer`'s are, and raised from the first `next()`; a failure after it is raised
        where the stream stands (what was given cannot be taken back)."""
        if not messages:
            raise ValueError("messages must not be empty")
        payload = {"model": self.model, "messages": [dict(m) for m in messages]}

        def first() -> tuple[str, Iterator[str]]:
            pieces = iter(self.transport.stream(payload))
            for piece in pieces:
                if piece:
                    return piece, pieces
            raise LLMBadResponse("reply: the streamed answer has no text", error="no content")

        (piece, rest), _attempts = self._retry.run(first)
        yield piece
        yield from rest

    def usage(self, messages: Sequence[Mapping[str, Any]], text: str, body: Mapping[str, Any] | None = None) -> Usage:
        """A chat answer's usage: what the response `body` reports, else estimated (a stream
        reports none)."""
        p, c, estimated = self._usage(body or {}, messages, text)
        return Usage(prompt_tokens=p, completion_tokens=c, total_tokens=p + c, model=str((body or {}).get("model") or self.model),
                     provider=self.transport.provider, estimated=estimated, prompt="chat")

    # -- internals --

    def _send(self, payload: dict[str, Any], attempts: int) -> tuple[dict[str, Any], int]:
        """One request, retried on transient failures; returns the body and the attempts so far."""
        return self._retry.run(lambda: self.transport.chat(payload), attempts)

    @staticmethod
    def _usage(
        body: Mapping[str, Any], messages: Sequence[Mapping[str, Any]], content: str | None
    ) -> tuple[int, int, bool]:
        """(prompt, completion, estimated) tokens of one response; estimated as characters / 4
        when the response reports no usage (some local servers do not)."""
        usage = body.get("usage")
        if isinstance(usage, dict):
            p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
            if isinstance(p, int) and isinstance(c, int) and p >= 0 and c >= 0:
                return p, c, False
        return math.ceil(_chars(messages) / 4), math.ceil(len(content or "") / 4), True
