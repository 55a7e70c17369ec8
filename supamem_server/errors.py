"""The one place where the kit's typed errors become HTTP statuses.

Not found (including another user's row, which row-level security hides) is 404 with the same
body as a row that never existed; bad input is 422 with the database's message and SQLSTATE;
a refusal is 403, a conflict or a state the row is not in 409, a limit 429, the database down
503, the language model failing (after the LLM client's retries) 502. Nothing is written when any
of them happens: the request's transaction rolls back.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from jobs.llm import LLMError
from supamem.errors import (
    ConflictError,
    DatabaseUnavailableError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    StateError,
    SupamemError,
)

from .auth import Unauthorized

log = logging.getLogger(__name__)

STATUS: tuple[tuple[type[SupamemError], int], ...] = (
    (NotFoundError, 404),
    (InvalidInputError, 422),
    (PermissionDeniedError, 403),
    (ConflictError, 409),
    (StateError, 409),
    (RateLimitedError, 429),
    (DatabaseUnavailableError, 503),
)


def status_of(exc: SupamemError) -> int:
    return next((status for kind, status in STATUS if isinstance(exc, kind)), 500)


def install(app: FastAPI) -> None:
    @app.exception_handler(Unauthorized)
    async def unauthorized(_request: Request, exc: Unauthorized) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(LLMError)
    async def model_failed(_request: Request, exc: LLMError) -> JSONResponse:
        # The upstream's words stay in the log: they may quote the prompt.
        log.warning("the language model failed: %s", exc)
        return JSONResponse({"detail": "the language model did not answer; try again"}, status_code=502)

    @app.exception_handler(SupamemError)
    async def kit_error(_request: Request, exc: SupamemError) -> JSONResponse:
        status = status_of(exc)
        if status == 500:  # the kit's own fault: logged, never described to the caller
            log.error("request failed: %s (SQLSTATE %s)", exc.message, exc.sqlstate)
            return JSONResponse({"detail": "internal error"}, status_code=500)
        body: dict[str, object] = {"detail": "not found" if status == 404 else exc.message}
        if status == 422 and exc.sqlstate:
            body["sqlstate"] = exc.sqlstate
        return JSONResponse(body, status_code=status)
