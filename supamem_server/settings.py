"""The HTTP server's settings, from the environment (the Supabase project's names)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, Field


class ServerSettings(BaseModel):
    """How tokens are verified and where the database is.

    `jwt_secret` verifies HS256 tokens (the project's legacy JWT secret); `jwks_url` serves the
    public keys of asymmetric tokens (RS256, ES256), by default the project's
    `<SUPABASE_URL>/auth/v1/.well-known/jwks.json`. At least one must be set.
    """

    jwt_secret: str | None = None
    jwks_url: str | None = None
    audience: str = "authenticated"
    database_url: str | None = None
    #: Seconds the JWKS is cached before it is fetched again.
    jwks_cache_seconds: float = 600
    #: A token naming an unknown key id fetches the JWKS again, at most once per this many seconds
    #: (so forged key ids cannot make the server hammer the JWKS endpoint).
    jwks_refresh_cooldown: float = 30
    #: Seed 004's A/B tracking: the share of conversations (by id) whose chat answers leave out the
    #: memories selected for them, each such answer marked `memory_arm: holdout` in its metadata
    #: (the others `memories`), so helpfulness can be compared with and without memories. 0: off.
    memory_holdout: float = Field(0.0, ge=0, le=1)
    #: Turns of the conversation the chat's prompt shows (seed 000's window of 10; seed 001's
    #: `CONVERSATION_HISTORY_LIMIT`).
    history_turns: int = Field(10, ge=1, le=50)
    #: Hours a session `/chat` starts keeps its turns (seed 001's `CONVERSATION_TTL_HOURS`); unset,
    #: the tenant's or the kit's setting (kept until deleted: seed 004's conversation list).
    conversation_ttl_hours: float | None = Field(None, gt=0, le=24 * 365 * 100)
    #: Seconds a request's database work may go unanswered before its connection is cut and the
    #: chat answers degraded (`SUPAMEM_DB_DEADLINE`; 0 turns it off): above Supabase's 8 s
    #: statement timeout for signed-in users, so a slow statement is cancelled by the server first.
    database_deadline: float | None = Field(10.0, gt=0)
    #: When set, `GET /metrics` asks for `Authorization: Bearer <token>` (`SUPAMEM_METRICS_TOKEN`);
    #: unset, it is open (counts and times, no user's data): keep it off the public network then.
    metrics_token: str | None = None
    #: Seconds between the background write-backs of chat turns held through an outage.
    write_back_interval: float = Field(5.0, gt=0)
    #: Requests of `POST /api/memories/extract` that may wait for the worker at once
    #: (`SUPAMEM_EXTRACTION_WAITERS`): each waits in one of the threads every synchronous route
    #: shares, so past this many a request answers at once, with what is pending.
    extraction_waiters: int = Field(8, ge=0, le=32)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerSettings:
        env = os.environ if environ is None else environ
        supabase_url = env.get("SUPABASE_URL")
        jwks = env.get("SUPABASE_JWKS_URL") or (
            f"{supabase_url.rstrip('/')}/auth/v1/.well-known/jwks.json" if supabase_url else None
        )
        return cls(
            jwt_secret=env.get("SUPABASE_JWT_SECRET") or None,
            jwks_url=jwks,
            audience=env.get("SUPABASE_JWT_AUDIENCE") or "authenticated",
            database_url=env.get("DATABASE_URL") or None,
            memory_holdout=float(env.get("SUPAMEM_MEMORY_HOLDOUT") or 0),
            history_turns=int(env.get("CONVERSATION_HISTORY_LIMIT") or 10),
            conversation_ttl_hours=float(env["CONVERSATION_TTL_HOURS"]) if env.get("CONVERSATION_TTL_HOURS") else None,
            database_deadline=float(env.get("SUPAMEM_DB_DEADLINE") or 10) or None,
            metrics_token=env.get("SUPAMEM_METRICS_TOKEN") or None,
            extraction_waiters=int(env.get("SUPAMEM_EXTRACTION_WAITERS") or 8),
        )
