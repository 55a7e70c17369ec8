"""Typed exceptions and the one place that maps PostgreSQL errors (SQLSTATEs) to them.

The SQL functions in schema `memory` raise specific SQLSTATEs with messages a person can act
on; callers catch meaning (`NotFoundError`), not driver classes. Nothing here is named
`MemoryError`: Python already has one, and shadowing it hides real out-of-memory errors.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg_pool import PoolClosed, PoolTimeout


class SupamemError(Exception):
    """Base class of every error the client raises.

    `sqlstate` is the PostgreSQL error code when the database raised it (None for errors the
    client detects itself, such as a pool timeout); `detail` and `hint` carry the server's
    DETAIL and HINT lines when present.
    """

    def __init__(
        self,
        message: str,
        *,
        sqlstate: str | None = None,
        detail: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint


class NotFoundError(SupamemError, LookupError):
    """The row does not exist, or the caller may not see it (SQLSTATE P0002)."""


#: Seed 003's name for the same error.
MemoryNotFoundError = NotFoundError


class InvalidInputError(SupamemError, ValueError):
    """Bad input: data exceptions (22xxx), check violations (23514), NUL bytes in text."""


class InvalidRoleError(InvalidInputError):
    """A message role other than 'user' or 'assistant' (SQLSTATE 22023, "invalid role")."""


class PermissionDeniedError(SupamemError, PermissionError):
    """The acting role may not do this (SQLSTATE 42501)."""


class ConflictError(SupamemError):
    """A uniqueness conflict (23505) or a serialization failure / deadlock (40xxx): retryable."""


class StateError(SupamemError):
    """Not possible in the object's current state (55000): an archived conversation, a memory
    that is no longer active, a job whose lease this worker no longer holds (another worker owns
    it now, or it was released or reaped: whatever the worker computed must be dropped)."""


class RateLimitedError(SupamemError):
    """A limit was reached (54000), e.g. extractions per user per minute: retry later."""


class ExtractionPendingError(SupamemError, TimeoutError):
    """`MemoryService.extract_memories` waited its timeout and `pending` of the conversation's
    questions still wait for the extraction worker (none running, a provider outage, extraction
    paused in job_kinds, the rate limit): the extraction goes on without the caller; `memories`
    holds those the conversation has given so far."""

    def __init__(self, message: str, *, pending: int, memories: list[Any]) -> None:
        super().__init__(message)
        self.pending = pending
        self.memories = memories


class DatabaseUnavailableError(SupamemError, ConnectionError):
    """The database cannot serve: connection refused or lost, pool timeout, shutdown, a statement
    cancelled by its timeout (the server too slow to answer), no answer within the deadline."""


class StatementCancelledError(DatabaseUnavailableError):
    """The server answered, cancelling the statement (57014): past its statement_timeout, or an
    operator's cancel. Nothing the statement did committed; the database itself is up."""


# SQLSTATE classes / codes that mean "the server is not there (any more)" or "cannot serve in
# time" (57014: the statement timeout, or an operator's cancel), not "bad request". Nothing the
# cancelled statement did committed.
_UNAVAILABLE_CLASSES = ("08", "53", "57P", "57014")
_NUL_MARKER = "NUL (0x00)"


def from_psycopg(exc: BaseException) -> SupamemError:
    """Translate a psycopg / psycopg_pool exception into a `SupamemError` (never raises)."""
    if isinstance(exc, SupamemError):
        return exc
    if isinstance(exc, (PoolTimeout, PoolClosed)):
        return DatabaseUnavailableError(f"database unavailable: {exc}")
    if not isinstance(exc, psycopg.Error):
        return SupamemError(f"{type(exc).__name__}: {exc}")

    sqlstate = exc.sqlstate
    diag = exc.diag
    message = (diag.message_primary if sqlstate else None) or str(exc).strip()
    kwargs = {"sqlstate": sqlstate, "detail": diag.message_detail, "hint": diag.message_hint}

    if sqlstate is None:
        # Raised by the driver, not the server. psycopg refuses NUL bytes client side
        # (DataError without a SQLSTATE); everything else is a connection that failed or broke.
        if isinstance(exc, psycopg.DataError) and _NUL_MARKER in str(exc):
            return InvalidInputError(f"text must not contain NUL bytes: {exc}", **kwargs)
        if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
            return DatabaseUnavailableError(f"database unavailable: {message}", **kwargs)
        return SupamemError(message, **kwargs)

    return error_for(sqlstate, message, detail=diag.message_detail, hint=diag.message_hint)


def error_for(sqlstate: str | None, message: str, *, detail: str | None = None, hint: str | None = None) -> SupamemError:
    """The typed error for a server SQLSTATE; errors that arrive as data (the Data API's error
    JSON) use it too, so both transports raise the same types."""
    kwargs = {"sqlstate": sqlstate, "detail": detail, "hint": hint}
    code = sqlstate or ""
    if code == "57014":
        return StatementCancelledError(f"database unavailable: {message}", **kwargs)
    if code.startswith(_UNAVAILABLE_CLASSES):
        return DatabaseUnavailableError(f"database unavailable: {message}", **kwargs)
    if code == "P0002":
        return NotFoundError(message, **kwargs)
    if code == "22023" and message.startswith("invalid role"):
        return InvalidRoleError(message, **kwargs)
    if code.startswith("22") or code in {"23502", "23503", "23514"}:
        return InvalidInputError(message, **kwargs)
    if code == "42501":
        return PermissionDeniedError(message, **kwargs)
    if code == "23505" or code.startswith("40"):
        return ConflictError(message, **kwargs)
    if code == "55000":
        return StateError(message, **kwargs)
    if code == "54000":
        return RateLimitedError(message, **kwargs)
    return SupamemError(message, **kwargs)


__all__ = [
    "ConflictError",
    "DatabaseUnavailableError",
    "InvalidInputError",
    "InvalidRoleError",
    "MemoryNotFoundError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitedError",
    "StatementCancelledError",
    "StateError",
    "SupamemError",
    "error_for",
    "from_psycopg",
]
