"""Seed 001's environment settings reach ConversationMemoryManager's defaults (read at import, as
the seed's module reads them), so they are checked in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from client_helpers import ROOT

PROBE = (
    "from supamem.session_manager import ConversationMemoryManager as M, Database as D;"
    "m = M(D('postgresql://127.0.0.1:1/none', open=False));"
    "print(m.ttl.total_seconds(), m.context_turns)"
)


def _defaults(**env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
        env={k: v for k, v in os.environ.items() if k not in ("CONVERSATION_TTL_HOURS", "CONVERSATION_HISTORY_LIMIT")}
        | env,
    )
    return done.stdout.strip()


def test_conversation_ttl_and_history_limit_come_from_the_environment():
    assert _defaults() == "86400.0 20"
    assert _defaults(CONVERSATION_TTL_HOURS="2.5", CONVERSATION_HISTORY_LIMIT="8") == "9000.0 8"
    assert _defaults(CONVERSATION_HISTORY_LIMIT="80") == "86400.0 50"  # seed 001: at most 50


def test_the_local_stacks_port_is_followed_when_no_url_is_given(monkeypatch) -> None:
    from supamem.db import database_url

    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("SUPAMEM_DB_PORT", "54399")
    assert database_url() == "postgresql://postgres:postgres@127.0.0.1:54399/postgres"
    monkeypatch.setenv("DATABASE_URL", "postgresql://elsewhere/db")
    assert database_url() == "postgresql://elsewhere/db", "an explicit URL wins"
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.setenv("SUPAMEM_DB_PORT", "not-a-port")
    with pytest.raises(ValueError, match="SUPAMEM_DB_PORT must be a port number"):
        database_url()
