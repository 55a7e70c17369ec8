"""A search's query embedded under the database's current embedding model, for hybrid search.

The app's embeddings client (`jobs.embeddings.EmbeddingClient`, `SUPAMEM_EMBEDDING_*`) embeds the
text with the query prefix; when that fails (the server is down, or serves another model than the
database uses) the search is lexical and the caller goes on, with a warning in the log. The HTTP
app's routes and `ConversationMemoryManager.get_context_for_query` both come through here.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from jobs.llm import LLMError

if TYPE_CHECKING:
    from jobs.embeddings import EmbeddingClient

    from .db import Transaction

log = logging.getLogger("supamem")

_MODEL_SQL = (
    "select memory_private.setting('embedding_model') ->> 0 as name,"
    " (memory_private.setting('embedding_dimensions'))::integer as dimensions"
)


def embedding_model(tx: Transaction) -> tuple[str, int]:
    """The database's current embedding model and its dimensions."""
    row = tx.execute(_MODEL_SQL)[0]
    return row["name"], row["dimensions"]


def query_embedding(embedder: EmbeddingClient, model: tuple[str, int], text: str) -> str | None:
    """`text`'s vector under `model` (pgvector's text form), or None: search lexically."""
    name, dimensions = model
    try:
        (vector,) = embedder.embed([text], model=name, dimensions=dimensions, purpose="query")
    except LLMError as exc:
        log.warning("no query embedding (%s); searching lexically", exc)
        return None
    return str(vector)
