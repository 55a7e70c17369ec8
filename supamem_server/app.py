"""The app factory and what a request needs: the database pool, the token verifier, the LLM and
embeddings clients."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from fastapi import FastAPI

from jobs.embeddings import EmbeddingClient
from jobs.llm import LLMClient
from supamem.db import Database
from supamem.fallback import FallbackBuffer

from . import chat, chat_outage, conversations, errors, events, memories, metrics, monitoring, pages, participants, profiles
from .auth import TokenVerifier
from .settings import ServerSettings

routers = (chat.router, conversations.router, participants.router, memories.router, profiles.router, events.router,
           metrics.router, monitoring.router, pages.router)


@dataclass
class Services:
    """`app.state.supamem`: set it on your own app when you mount the routers yourself."""

    db: Database
    verifier: TokenVerifier
    llm: LLMClient
    events: events.MemoryEvents
    embedder: EmbeddingClient
    #: The share of conversations answered without their memories (ServerSettings.memory_holdout).
    memory_holdout: float = 0.0
    #: Turns of the conversation the chat's prompt shows (ServerSettings.history_turns).
    history_turns: int = 10
    #: How long a session the chat starts keeps its turns (ServerSettings.conversation_ttl_hours).
    session_ttl: timedelta | None = None
    #: Chat turns answered while the database was unreachable, until they are written back.
    fallback: FallbackBuffer = field(default_factory=FallbackBuffer)
    flush_lock: threading.Lock = field(default_factory=threading.Lock)
    #: The bearer token `GET /metrics` asks for (ServerSettings.metrics_token).
    metrics_token: str | None = None
    #: The app's metrics (`GET /metrics`).
    monitoring: monitoring.Monitoring = field(init=False)
    #: Places for extraction requests that wait for the worker (ServerSettings.extraction_waiters).
    extraction_waiters: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(8))

    def __post_init__(self) -> None:
        self.monitoring = monitoring.Monitoring(self, self.metrics_token)


def create_app(settings: ServerSettings | None = None, *, db: Database | None = None,
               llm: LLMClient | None = None, embedder: EmbeddingClient | None = None) -> FastAPI:
    settings = settings or ServerSettings.from_env()
    db = db or Database(settings.database_url, deadline=settings.database_deadline)
    services = Services(db=db, verifier=TokenVerifier(settings), llm=llm or LLMClient.from_env(),
                        events=events.MemoryEvents(db.url), embedder=embedder or EmbeddingClient.from_env(),
                        memory_holdout=settings.memory_holdout, history_turns=settings.history_turns,
                        session_ttl=None if settings.conversation_ttl_hours is None
                        else timedelta(hours=settings.conversation_ttl_hours), metrics_token=settings.metrics_token)

    write_back = chat_outage.WriteBack(services, settings.write_back_interval)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        write_back.start()
        yield
        write_back.stop()
        services.events.close()
        services.db.close()
        services.llm.close()
        services.embedder.close()

    app = FastAPI(title="supamem", summary="Conversation memory for LLM chat apps, over Supabase Postgres",
                  version="0.1.0", lifespan=lifespan)
    services.extraction_waiters = threading.Semaphore(settings.extraction_waiters)
    app.state.supamem = services
    app.add_middleware(monitoring.Measured, monitoring=services.monitoring)
    errors.install(app)
    for router in routers:
        app.include_router(router)
    return app
