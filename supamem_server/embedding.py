"""The query's embedding for a route's hybrid search, through the app's embeddings client."""

from __future__ import annotations

from fastapi import Request

from supamem.query_embedding import embedding_model
from supamem.query_embedding import query_embedding as embed_query

from .deps import Tx


def query_embedding(request: Request, tx: Tx, question: str) -> str | None:
    """The question's vector under the database's current model, or None (lexical only)."""
    return embed_query(request.app.state.supamem.embedder, embedding_model(tx), question)
