"""Supabase Auth access tokens, verified as Supabase issues them.

A request carries `Authorization: Bearer <access token>`. HS256 tokens are verified with the
project's JWT secret; RS256 and ES256 tokens with the public key their `kid` names in the
project's JWKS (cached; a token naming an unknown key id fetches it again, at most once per
cooldown, so a key rotation is picked up). Any other algorithm, `none` included, an expired token, a wrong audience, a role
other than `authenticated` or a subject that is not a user id is refused with 401. The verified
claims are what the request's SQL runs with (`request.jwt.claims`), as PostgREST does.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import jwt
from fastapi import Request

from .settings import ServerSettings

ASYMMETRIC = ("RS256", "ES256")


class Unauthorized(Exception):
    """No token, or one that does not verify (HTTP 401)."""


class TokenVerifier:
    def __init__(self, settings: ServerSettings) -> None:
        if not settings.jwt_secret and not settings.jwks_url:
            raise ValueError("set SUPABASE_JWT_SECRET or SUPABASE_JWKS_URL (or SUPABASE_URL) to verify tokens")
        self.settings = settings
        self._jwks = (
            jwt.PyJWKClient(settings.jwks_url, cache_keys=True, lifespan=settings.jwks_cache_seconds,
                            cooldown_duration=settings.jwks_refresh_cooldown)
            if settings.jwks_url else None
        )

    def _key(self, token: str, algorithm: str) -> Any:
        if algorithm == "HS256" and self.settings.jwt_secret:
            return self.settings.jwt_secret
        if algorithm in ASYMMETRIC and self._jwks is not None:
            try:
                return self._jwks.get_signing_key_from_jwt(token).key
            except jwt.PyJWKClientError as exc:
                raise Unauthorized(f"no key to verify this token: {exc}") from exc
        raise Unauthorized(f"tokens signed with {algorithm} are not accepted")

    def verify(self, token: str) -> dict[str, Any]:
        """The token's claims, or Unauthorized."""
        try:
            algorithm = jwt.get_unverified_header(token).get("alg")
        except jwt.InvalidTokenError as exc:
            raise Unauthorized(f"malformed token: {exc}") from exc
        if not isinstance(algorithm, str):
            raise Unauthorized("token has no algorithm")
        key = self._key(token, algorithm)
        try:
            claims = jwt.decode(
                token, key, algorithms=[algorithm], audience=self.settings.audience,
                options={"require": ["exp", "sub", "aud"]},
            )
        except jwt.InvalidTokenError as exc:
            raise Unauthorized(str(exc)) from exc
        except (jwt.PyJWTError, TypeError, ValueError) as exc:
            # A key of another type than the header's algorithm (an ES256 header naming an RSA key).
            raise Unauthorized(f"the token's key does not fit its algorithm ({algorithm})") from exc
        if claims.get("role") != "authenticated":
            raise Unauthorized("token is not a signed-in user's (role must be authenticated)")
        try:
            UUID(str(claims["sub"]))
        except ValueError as exc:
            raise Unauthorized("token subject is not a user id") from exc
        return claims


def bearer_token(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("sign in: send Authorization: Bearer <access token>")
    return token.strip()
