"""The embeddings client: OpenAI-compatible `POST {base_url}/embeddings`, batched, with the LLM
client's retries.

    client = EmbeddingClient.from_env()
    vectors = client.embed(["I run marathons", "my knee hurts"], model="text-embedding-3-small", dimensions=1536)

Any server speaking OpenAI's embeddings API works by configuration: OpenAI, Ollama, vLLM,
llama.cpp's server, text-embeddings-inference. The model and its dimensions are the database's
(`memory.set_embedding_model`): embed jobs and query embeddings use the same ones. The default
provider is offline: deterministic vectors from the words of the text, so tests and the demo run
anywhere (it finds shared words, not meaning; configure a real model for that).

Failures follow `jobs.llm` (typed errors; 429, 5xx, timeouts retried with backoff or Retry-After).
A vector of other dimensions than the model's raises `EmbeddingDimensionError`, before anything
is written: the configured model and the server disagree, and every request would fail alike.
Rows to store go through `embed_rows`, where a text the server refuses on its own (HTTP 400, 413,
422: too long for the model, say) comes back as `Refused` beside the others' vectors, so one row
cannot fail its user's every batch; a server that refuses every text raises instead.

Configuration (`SUPAMEM_EMBEDDING_*`, read like `SUPAMEM_LLM_*`):
    SUPAMEM_EMBEDDING_PROVIDER     offline (default) | openai
    SUPAMEM_EMBEDDING_BASE_URL     default https://api.openai.com/v1
    SUPAMEM_EMBEDDING_API_KEY      or OPENAI_API_KEY
    SUPAMEM_EMBEDDING_TIMEOUT      seconds, default 30
    SUPAMEM_EMBEDDING_MAX_RETRIES  default 4
    SUPAMEM_EMBEDDING_QUERY_PREFIX, SUPAMEM_EMBEDDING_DOCUMENT_PREFIX
                                   text put before a search query and before a stored row, for
                                   models trained with them (e5: "query: " and "passage: ";
                                   nomic-embed-text: "search_query: " and "search_document: ");
                                   default none, taken as written (spaces kept)
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from jobs.llm import INPUT_REFUSALS, HTTPTransport, LLMBadResponse, LLMConfigError, LLMRequestError, LLMSettings, Retry

__all__ = ["OFFLINE_EMBEDDING_MODEL", "EmbeddingClient", "EmbeddingDimensionError", "OfflineEmbeddings", "Refused"]

#: The offline provider's model, the database's default `embedding_model`.
OFFLINE_EMBEDDING_MODEL = "offline-hash-384"
#: Texts per request; servers cap a request's inputs (OpenAI at 2,048).
MAX_BATCH = 64


class EmbeddingDimensionError(LLMConfigError):
    """The server's vectors do not have the configured model's dimensions."""


@dataclass(frozen=True)
class Refused:
    """The server's refusal of one text sent on its own; `reason` is its HTTP status and what it said."""

    reason: str


class EmbeddingTransport(Protocol):
    provider: str

    def embeddings(self, payload: dict[str, Any]) -> dict[str, Any]: ...

    def close(self) -> None: ...


_WORD = re.compile(r"[^\W_]+")


class OfflineEmbeddings:
    """Deterministic vectors without a network: each word (lowercased, a trailing s dropped) and
    each of its character trigrams adds a signed unit to a hashed coordinate; the sum is
    normalised. Texts sharing words are near; a text without words gets a fixed unit vector."""

    provider = "offline"

    def embeddings(self, payload: dict[str, Any]) -> dict[str, Any]:
        texts = payload.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        dimensions = int(payload.get("dimensions") or 384)
        data = [{"object": "embedding", "index": i, "embedding": self.vector(t, dimensions)} for i, t in enumerate(texts)]
        return {"object": "list", "data": data, "model": payload.get("model"), "usage": None}

    @staticmethod
    def vector(text: str, dimensions: int) -> list[float]:
        values = [0.0] * dimensions
        for word in _WORD.findall(text.lower()):
            word = word[:-1] if len(word) > 3 and word.endswith("s") else word
            padded = f"<{word}>"
            features = [word, *(padded[i : i + 3] for i in range(len(padded) - 2))]
            for weight, feature in zip([2.0] + [1.0] * (len(features) - 1), features, strict=True):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "big") % dimensions
                values[slot] += weight if digest[4] & 1 else -weight
        norm = math.sqrt(sum(v * v for v in values))
        if norm == 0:
            values[0], norm = 1.0, 1.0
        return [v / norm for v in values]

    def close(self) -> None:
        pass


class EmbeddingClient:
    """Vectors for texts from the configured provider; see the module docstring."""

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        transport: EmbeddingTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        self.settings = settings if settings is not None else LLMSettings.from_env(prefix="SUPAMEM_EMBEDDING")
        self.prefixes = {"query": query_prefix, "document": document_prefix}
        if transport is None:
            transport = OfflineEmbeddings() if self.settings.provider == "offline" else HTTPTransport(self.settings)
        self.transport = transport
        self._retry = Retry(self.settings, sleep=sleep, rng=rng)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **kwargs: Any) -> EmbeddingClient:
        env = os.environ if environ is None else environ
        return cls(
            LLMSettings.from_env(env, prefix="SUPAMEM_EMBEDDING"),
            query_prefix=env.get("SUPAMEM_EMBEDDING_QUERY_PREFIX", ""),
            document_prefix=env.get("SUPAMEM_EMBEDDING_DOCUMENT_PREFIX", ""),
            **kwargs,
        )

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> EmbeddingClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def embed(
        self, texts: Sequence[str], *, model: str, dimensions: int, purpose: Literal["document", "query"] = "document"
    ) -> list[list[float]]:
        """One vector per text, in order: rows to store (`document`) or what a search looks for
        (`query`), each text after its purpose's prefix. Raises EmbeddingDimensionError,
        LLMBadResponse and the transport's typed errors (LLMError)."""
        vectors: list[list[float]] = []
        for batch in self._batches(texts, model, self.prefixes[purpose]):
            vectors.extend(self._request(batch, model, dimensions))
        return vectors

    def embed_rows(self, texts: Sequence[str], *, model: str, dimensions: int) -> list[list[float] | Refused]:
        """One vector per row to store, in order, or `Refused` for a text the server refuses on
        its own: a batch refused for its input (INPUT_REFUSALS) is halved until each refused text
        stands alone (a request per halving: about 2 log2(64) more for one refused text in a full
        batch). Raises as `embed` does, and the refusal itself when the server took none of the
        texts: a server that refuses everything is misconfigured, not faced with bad rows."""
        refusals: list[LLMRequestError] = []

        def attempt(batch: list[str]) -> list[list[float] | Refused]:
            try:
                return list(self._request(batch, model, dimensions))
            except LLMRequestError as exc:
                if exc.status not in INPUT_REFUSALS:
                    raise
                if len(batch) == 1:
                    refusals.append(exc)
                    return [Refused(f"HTTP {exc.status}: {exc.excerpt}" if exc.excerpt else f"HTTP {exc.status}")]
                half = len(batch) // 2
                return attempt(batch[:half]) + attempt(batch[half:])

        rows: list[list[float] | Refused] = []
        for batch in self._batches(texts, model, self.prefixes["document"]):
            rows.extend(attempt(batch))
        if refusals and len(refusals) == len(rows):
            raise refusals[0]
        return rows

    def _batches(self, texts: Sequence[str], model: str, prefix: str) -> list[list[str]]:
        """The texts after their prefix in requests of MAX_BATCH, once the provider is known to
        serve the database's model."""
        if isinstance(self.transport, OfflineEmbeddings) != (model == OFFLINE_EMBEDDING_MODEL):
            raise LLMConfigError(
                f"the database's embedding model is {model!r} but {self.settings.variable('provider')} is "
                f"{self.settings.provider!r}: configure a server for that model, or call "
                f"memory.set_embedding_model to the model the server has"
            )
        return [[prefix + text for text in texts[start : start + MAX_BATCH]] for start in range(0, len(texts), MAX_BATCH)]

    def _request(self, batch: list[str], model: str, dimensions: int) -> list[list[float]]:
        """One request's vectors, retried as the LLM client retries."""
        payload: dict[str, Any] = {"model": model, "input": batch, "encoding_format": "float"}
        if isinstance(self.transport, OfflineEmbeddings):
            payload["dimensions"] = dimensions
        body, _ = self._retry.run(lambda: self.transport.embeddings(payload))
        return _vectors(body, len(batch), model, dimensions)


def _vectors(body: Mapping[str, Any], count: int, model: str, dimensions: int) -> list[list[float]]:
    """The response's vectors in input order, checked."""
    data = body.get("data")
    if not isinstance(data, list) or len(data) != count:
        got = len(data) if isinstance(data, list) else type(data).__name__
        raise LLMBadResponse(f"embeddings: expected {count} vectors in data, got {got}", error="wrong count")
    ordered: list[list[float] | None] = [None] * count
    for position, item in enumerate(data):
        index = item.get("index", position) if isinstance(item, Mapping) else None
        vector = item.get("embedding") if isinstance(item, Mapping) else None
        if not isinstance(index, int) or not 0 <= index < count or ordered[index] is not None:
            raise LLMBadResponse(f"embeddings: item {position} has no usable index", error="bad index")
        if not isinstance(vector, list) or not all(isinstance(v, int | float) and math.isfinite(v) for v in vector):
            raise LLMBadResponse(f"embeddings: item {position} is not a list of finite numbers", error="bad vector")
        if len(vector) != dimensions:
            raise EmbeddingDimensionError(
                f"the embedding model {model!r} returned {len(vector)} dimensions, but the database expects "
                f"{dimensions}; call memory.set_embedding_model({model!r}, {len(vector)}) if that is the model you want"
            )
        ordered[index] = [float(v) for v in vector]
    return [v for v in ordered if v is not None]
