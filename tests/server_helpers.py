"""The kit's HTTP app, served for real on loopback, and Supabase-style access tokens for it.

`served_app` starts uvicorn on a free 127.0.0.1 port in a thread, against the test database,
with the offline LLM; tokens are signed by the test: HS256 with a test secret, RS256 with a test
RSA key whose public half a loopback JWKS server publishes (as a Supabase project does at
/auth/v1/.well-known/jwks.json). `Person` is a signed-in Supabase Auth user with an httpx client
that carries their token.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import psycopg
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa

from jobs.embeddings import EmbeddingClient
from jobs.llm import LLMClient, LLMSettings
from supamem.db import Database
from supamem_server import create_app
from supamem_server.settings import ServerSettings

SECRET = "test-secret-of-at-least-thirty-two-bytes!"


class JWKS:
    """A loopback JWKS endpoint and the RSA keys it publishes (rotate() adds a new one)."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.fetches = 0
        self.rotate()
        jwks = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                jwks.fetches += 1
                body = json.dumps({"keys": [
                    {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())), "kid": kid, "alg": "RS256", "use": "sig"}
                    for kid, key in jwks.keys.items()]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/auth/v1/.well-known/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def rotate(self) -> str:
        kid = uuid.uuid4().hex[:8]
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.latest = kid
        return kid

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def claims_for(user: uuid.UUID, **overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"sub": str(user), "aud": "authenticated", "role": "authenticated", "iat": now, "exp": now + 3600,
            "email": f"{user.hex[:8]}@supamem.test", **overrides}


def hs256(claims: dict[str, Any], secret: str = SECRET) -> str:
    return jwt.encode(claims, secret, algorithm="HS256")


def rs256(claims: dict[str, Any], jwks: JWKS, kid: str | None = None) -> str:
    kid = kid or jwks.latest
    return jwt.encode(claims, jwks.keys[kid], algorithm="RS256", headers={"kid": kid})


@dataclass
class Served:
    url: str
    jwks: JWKS
    postgres_conn: psycopg.Connection
    app: Any  # the ASGI app uvicorn serves, for a test that plays the ASGI server itself
    people: list[Person] = field(default_factory=list)

    def person(self, *, rsa_signed: bool = False) -> Person:
        """A new Supabase Auth user, signed in (HS256 by default, RS256 through the JWKS)."""
        row = self.postgres_conn.execute(
            "insert into auth.users (id, email) values (gen_random_uuid(), %s) returning id",
            [f"{uuid.uuid4().hex[:12]}@server.test"]).fetchone()
        assert row is not None
        token = rs256(claims_for(row[0]), self.jwks) if rsa_signed else hs256(claims_for(row[0]))
        person = Person(row[0], httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30), token)
        self.people.append(person)
        return person

    def anonymous(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@dataclass
class Person:
    id: uuid.UUID
    http: httpx.Client
    token: str


def busy_connections(database_url: str) -> int:
    """The app's pooled connections (application_name supamem) in a statement or a transaction now."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "select count(*)::integer from pg_stat_activity"
            " where application_name = 'supamem' and state <> 'idle' and pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return row[0]


def serve(database_url: str, postgres_conn: psycopg.Connection, embedder: EmbeddingClient | None = None,
          llm: LLMClient | None = None, db: Database | None = None, **options: Any) -> Iterator[Served]:
    """The app on loopback; `options` are ServerSettings fields (memory_holdout, history_turns...)."""
    jwks = JWKS()
    settings = ServerSettings(jwt_secret=SECRET, jwks_url=jwks.url, database_url=database_url, jwks_refresh_cooldown=0,
                              **options)
    db = db or Database(database_url, max_size=4, deadline=settings.database_deadline)
    app = create_app(settings, db=db, llm=llm or LLMClient.from_env({"SUPAMEM_LLM_PROVIDER": "offline"}),
                     embedder=embedder or EmbeddingClient(LLMSettings(provider="offline")))
    # The socket listens before uvicorn runs, so requests wait in its backlog instead of racing the start.
    # It names TCP as its protocol: asyncio turns Nagle's algorithm off only on such sockets, and with it
    # on every response on a kept-alive connection waited about 40 ms for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    served = Served(f"http://127.0.0.1:{port}", jwks, postgres_conn, app)
    try:
        yield served
    finally:
        for person in served.people:
            person.http.close()
        server.should_exit = True
        thread.join()
        sock.close()
        jwks.close()
