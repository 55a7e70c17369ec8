"""Per-request dependencies: the verified claims and a transaction that acts as their user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any
from uuid import UUID

from fastapi import Depends, Request
from psycopg import sql

from supamem.db import Transaction
from supamem.errors import NotFoundError

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


def visible(tx: Transaction, table: str, row_id: UUID, what: str) -> dict[str, Any]:
    """The row of `memory.<table>` with this id as the caller sees it (row-level security), or
    NotFoundError: another user's row reads exactly like one that does not exist."""
    rows = tx.execute(sql.SQL("select * from memory.{} where id = %s").format(sql.Identifier(table)), [row_id])
    if not rows:
        raise NotFoundError(f"{what} not found")
    return rows[0]


def user_id(verified: Claims) -> UUID:
    return UUID(str(verified["sub"]))


UserId = Annotated[UUID, Depends(user_id)]
