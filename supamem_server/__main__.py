"""`python -m supamem_server`: serve the app (what `make serve` runs).

    python -m supamem_server [--host 127.0.0.1] [--port 8000] [--demo-user EMAIL]

Tokens are verified with SUPABASE_JWT_SECRET and/or SUPABASE_JWKS_URL (or SUPABASE_URL). With
neither set, a secret is made up for this run: only tokens this command prints verify.
`--demo-user` is for the local stack only: it makes (or finds) that Supabase Auth user in
auth.users and prints an access token for it, valid for a day.
"""

from __future__ import annotations

import argparse
import secrets
import time

import jwt
import psycopg
import uvicorn

from supamem.db import database_url

from .app import create_app
from .settings import ServerSettings


def demo_token(email: str, secret: str) -> tuple[str, str]:
    """(user id, HS256 access token) of the local Supabase Auth user with this email."""
    with psycopg.connect(database_url(), autocommit=True) as conn:
        row = conn.execute("select id from auth.users where email = %s", [email]).fetchone()
        if row is None:
            row = conn.execute(
                "insert into auth.users (id, email) values (gen_random_uuid(), %s) returning id", [email]).fetchone()
    assert row is not None
    now = int(time.time())
    claims = {"sub": str(row[0]), "aud": "authenticated", "role": "authenticated", "email": email,
              "iat": now, "exp": now + 86_400}
    return str(row[0]), jwt.encode(claims, secret, algorithm="HS256")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m supamem_server", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--demo-user", metavar="EMAIL", help="local stack only: sign in as this user and print a token")
    args = parser.parse_args(argv)
    settings = ServerSettings.from_env()
    if not settings.jwt_secret and not settings.jwks_url:
        settings.jwt_secret = secrets.token_urlsafe(32)
    base = f"http://{args.host}:{args.port}"
    if args.demo_user:
        if not settings.jwt_secret:
            parser.error("--demo-user signs with SUPABASE_JWT_SECRET; set it (or unset SUPABASE_JWKS_URL)")
        user, token = demo_token(args.demo_user, settings.jwt_secret)
        print(f"Signed in as {args.demo_user} ({user}). Open the pages with this link (valid for a day):\n")
        print(f"  {base}/signin#token={token}\n")
        print(f"or call the API with the access token:\n\n{token}\n")
    print(f"API {base}/docs   OpenAPI {base}/openapi.json", flush=True)
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")


if __name__ == "__main__":
    main()
