"""A text's embedding for hybrid search and the chat, through the app's embeddings client.

Read and embedded before the request's transaction opens (a route lists its search parameter
before `Tx`; the chat embeds before its first transaction): a transaction open while the embeddings
server answers would hold one of the pool's connections for as long.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from fastapi import Depends, Query, Request

from supamem.query_embedding import embedding_model, query_embedding

from .deps import Claims


def embedded(request: Request, verified: dict[str, Any], text: str, kind: Literal["chat", "search"]) -> str | None:
    """`text`'s vector under the database's current model, or None (lexical only). The request is
    taken from the user's requests of `kind` this minute first (memory.take_request: 54000, a 429,
    when none is left), in the same transaction."""
    services = request.app.state.supamem
    with services.db.transaction(claims=verified) as tx:
        tx.call("take_request", kind=kind)
        model = embedding_model(tx)
    return query_embedding(services.embedder, model, text)


class Search(NamedTuple):
    """A route's search text and its vector (None: lexical only, or no search)."""

    text: str | None
    vector: str | None


def search_parameter(description: str, *, min_length: int | None = None) -> Any:
    """The `search` query parameter, embedded before the route's transaction opens."""

    def search(request: Request, verified: Claims, search: str | None = Query(
        None, min_length=min_length, max_length=1000, description=description,
    )) -> Search:
        return Search(search, embedded(request, verified, search, "search") if search else None)

    return Depends(search)
