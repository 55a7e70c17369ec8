"""Per-request dependencies: the verified claims and a transaction that acts as their user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any
from uuid import UUID

from fastapi import Depends, Request

from supamem.db import Transaction

from .auth import bearer_token


def claims(request: Request) -> dict[str, Any]:
    return request.app.state.supamem.verifier.verify(bearer_token(request))


Claims = Annotated[dict[str, Any], Depends(claims)]


def user_transaction(request: Request, verified: Claims) -> Iterator[Transaction]:
    """One transaction for the request, as the token's user; it commits when the endpoint
    returns and rolls back when it raises. The user's `memory.users` row is made on their
    first request (`register_user` is idempotent)."""
    with request.app.state.supamem.db.transaction(claims=verified) as tx:
        tx.call("register_user")
        yield tx


# scope="function": the transaction commits before the response is sent, so a client that got
# its answer reads what it wrote, and a failing commit is the request's error, not a lost write.
Tx = Annotated[Transaction, Depends(user_transaction, scope="function")]


def user_id(verified: Claims) -> UUID:
    return UUID(str(verified["sub"]))


UserId = Annotated[UUID, Depends(user_id)]
