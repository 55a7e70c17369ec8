"""Live memory updates as server-sent events: GET /api/events.

The database announces every memory change on the `supamem_memories` channel (ids and the
operation, never content; see migration 20261124050800). One LISTEN connection per process,
opened on the first subscription, fans the announcements out to the open streams of the user
they concern; a page then reads the memory itself through row-level security
(`GET /api/memories/{id}`). A lost connection is reopened; announcements made while it was down
are not replayed (the settings page reads its list again each time its stream opens). A user
holds at most STREAMS_PER_USER streams in a process (a page holds one); one more is 429.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any
from uuid import UUID

import psycopg
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from supamem.errors import RateLimitedError

from .deps import UserId

log = logging.getLogger(__name__)
CHANNEL = "supamem_memories"
KEEPALIVE_SECONDS = 15.0
#: Open streams per user and process: a tab each, with room to spare, never without bound.
STREAMS_PER_USER = 10

router = APIRouter(tags=["events"])


class MemoryEvents:
    def __init__(self, database_url: str) -> None:
        self.url = database_url
        self._streams: dict[UUID, set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._thread: threading.Thread | None = None

    def subscribe(self, user: UUID) -> asyncio.Queue[dict[str, Any]]:
        """A queue that receives the user's memory events until `unsubscribe`; returns once the
        process is listening, so nothing committed after this call is missed."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        with self._lock:
            streams = self._streams.setdefault(user, set())
            if len(streams) >= STREAMS_PER_USER:
                raise RateLimitedError(f"at most {STREAMS_PER_USER} event streams are open at once; close one first")
            streams.add((asyncio.get_running_loop(), queue))
            if self._thread is None:
                self._thread = threading.Thread(target=self._listen, name="supamem-events", daemon=True)
                self._thread.start()
        return queue

    async def ready(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._listening.wait)

    def unsubscribe(self, user: UUID, queue: asyncio.Queue[dict[str, Any]]) -> None:
        with self._lock:
            streams = self._streams.get(user, set())
            streams.difference_update({s for s in streams if s[1] is queue})
            if not streams:
                self._streams.pop(user, None)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, application_name="supamem-events") as conn:
                    conn.execute(f"listen {CHANNEL}")
                    self._listening.set()
                    while not self._stop.is_set():
                        for notice in conn.notifies(timeout=1.0):
                            self._dispatch(notice.payload)
            except psycopg.Error as exc:
                log.warning("memory events: connection lost (%s); reconnecting", exc)
                self._stop.wait(1.0)

    def _dispatch(self, payload: str) -> None:
        event = json.loads(payload)
        with self._lock:
            streams = list(self._streams.get(UUID(event["user_id"]), ()))
        for loop, queue in streams:
            loop.call_soon_threadsafe(queue.put_nowait, {"memory_id": event["memory_id"], "op": event["op"]})


class _Stream(StreamingResponse):
    """A stream that gives its user's slot back however it ends: the generator's own cleanup does
    not run when the client is gone before its first chunk."""

    def __init__(self, chunks: AsyncIterator[str], release: Callable[[], None]) -> None:
        super().__init__(chunks, media_type="text/event-stream", headers={"Cache-Control": "no-store"})
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


@router.get("/api/events", summary="Server-sent events: the signed-in user's memory changes (event: memory)",
            responses={200: {"content": {"text/event-stream": {}}}, 429: {"description": "too many streams open"}})
async def events(request: Request, user: UserId) -> StreamingResponse:
    hub: MemoryEvents = request.app.state.supamem.events
    queue = hub.subscribe(user)
    try:
        await hub.ready()
    except BaseException:
        hub.unsubscribe(user, queue)
        raise

    async def stream() -> AsyncIterator[str]:
        yield ": listening\n\n"
        while not await request.is_disconnected():
            try:
                event = await asyncio.wait_for(queue.get(), timeout=KEEPALIVE_SECONDS)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            yield f"event: memory\ndata: {json.dumps(event)}\n\n"

    return _Stream(stream(), lambda: hub.unsubscribe(user, queue))
