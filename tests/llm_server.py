"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for testing jobs.llm over real HTTP.

Each test queues the responses the server will give, in order (status, headers, body, and an
optional delay to provoke client timeouts); the server records every request it receives (method,
path, headers, JSON body) for assertions. A request with nothing queued gets HTTP 599 and is
recorded in `unexpected`, so a test fails clearly when the client sends more than it should.

    def test_something(llm_server):
        llm_server.enqueue(chat_completion({"title": "Hello"}))
        ...
        assert llm_server.requests[0].json["model"] == "gpt-4o-mini"
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["Scripted", "Recorded", "ScriptedLLMServer", "chat_completion", "llm_server", "sse_chunks"]


@dataclass
class Scripted:
    """One response. `body`: a dict/list (sent as JSON), str or bytes (sent as is)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    during: Callable[[], None] | None = None  # runs while the client waits for this answer
    #: A streamed answer: sent piece by piece on a connection closed after the last one, with
    #: `between` run once the first piece is out (so a test can see it arrive before the rest).
    chunks: list[bytes] | None = None
    between: Callable[[], None] | None = None


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None


def chat_completion(
    content: Any,
    *,
    usage: dict[str, int] | None | bool = True,
    model: str = "gpt-4o-mini-2024-07-18",
    refusal: str | None = None,
) -> Scripted:
    """A 200 chat.completion whose message content is `content` (a dict/list is JSON-encoded).

    usage=True gives fixed counts (prompt 11, completion 7); None/False leaves usage out.
    """
    text = content if isinstance(content, str) or content is None else json.dumps(content)
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if refusal is not None:
        message["refusal"] = refusal
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    if usage is True:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    elif isinstance(usage, dict):
        body["usage"] = usage
    return Scripted(200, body)


class ScriptedLLMServer:
    def __init__(self) -> None:
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self.unexpected: list[Recorded] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                server._handle(self)

            do_GET = do_POST  # noqa: N815

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a handler still sleeping for a timeout test is not waited for
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def enqueue(self, *responses: Scripted) -> None:
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        record = Recorded(
            handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, raw
        )
        with self._lock:
            self.requests.append(record)
            scripted = self._queue.popleft() if self._queue else None
        if scripted is None:
            self.unexpected.append(record)
            scripted = Scripted(599, {"error": {"message": "no scripted response left"}})
        if scripted.during is not None:
            scripted.during()
        if scripted.delay:
            time.sleep(scripted.delay)
        if scripted.chunks is not None:
            self._stream(handler, scripted)
            return
        body = scripted.body
        if isinstance(body, bytes):
            payload = body
        elif isinstance(body, str):
            payload = body.encode()
        elif body is None:
            payload = b""
        else:
            payload = json.dumps(body).encode()
        try:
            handler.send_response(scripted.status)
            headers = {"Content-Type": "application/json", **scripted.headers}
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    @staticmethod
    def _stream(handler: BaseHTTPRequestHandler, scripted: Scripted) -> None:
        try:
            handler.send_response(scripted.status)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Connection", "close")
            handler.end_headers()
            for n, chunk in enumerate(scripted.chunks or []):
                handler.wfile.write(chunk)
                handler.wfile.flush()
                if n == 0 and scripted.between is not None:
                    scripted.between()
        except (BrokenPipeError, ConnectionResetError):
            pass
        handler.close_connection = True


def sse_chunks(*pieces: str, done: bool = True) -> list[bytes]:
    """A streamed chat completion: one chat.completion.chunk event per piece, then `[DONE]` (left
    out with `done=False`: a stream cut off)."""
    def event(piece: str) -> bytes:
        chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": piece}}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    events = [event(piece) for piece in pieces]
    return events + ([b"data: [DONE]\n\n"] if done else [])


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started scripted server, shut down after the test."""
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
