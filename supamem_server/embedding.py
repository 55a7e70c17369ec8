"""The query's embedding for hybrid search, under the database's current embedding model.

The app's embeddings client (`SUPAMEM_EMBEDDING_*`, offline by default) embeds the text a route
searches with; when that fails (the server is down, or serves another model than the database
uses) the search is lexical and the request goes on, with a warning in the log.
"""

from __future__ import annotations

import logging

from fastapi import Request

from jobs.llm import LLMError

from .deps import Tx

log = logging.getLogger("supamem.server")


def query_embedding(request: Request, tx: Tx, question: str) -> str | None:
    """The question's vector under the database's current model, or None (lexical only)."""
    model = tx.execute(
        "select memory_private.setting('embedding_model') ->> 0 as name,"
        " (memory_private.setting('embedding_dimensions'))::integer as dimensions"
    )[0]
    try:
        (vector,) = request.app.state.supamem.embedder.embed(
            [question], model=model["name"], dimensions=model["dimensions"], purpose="query"
        )
    except LLMError as exc:
        log.warning("no query embedding (%s); searching lexically", exc)
        return None
    return str(vector)
