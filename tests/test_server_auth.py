"""Supabase Auth tokens at the HTTP door: what verifies, what is refused (401), and that a
request runs as its token's user (row-level security decides)."""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

import jwt
import pytest
from server_helpers import SECRET, Served, claims_for, hs256, rs256

ROUTE = "/api/conversations"


def test_a_valid_hs256_token_is_served_as_its_user(served: Served) -> None:
    alice = served.person()
    made = alice.http.post(ROUTE, json={"title": "Mine"})
    assert made.status_code == 201, made.text
    owner = served.postgres_conn.execute("select user_id from memory.conversations where id = %s", [made.json()["id"]]).fetchone()
    assert owner == (alice.id,)


def test_an_rs256_token_is_verified_with_the_projects_jwks(served: Served) -> None:
    bob = served.person(rsa_signed=True)
    assert bob.http.get(ROUTE).status_code == 200


def test_a_rotated_key_is_fetched_when_a_token_names_it(served: Served) -> None:
    carol = served.person(rsa_signed=True)
    assert carol.http.get(ROUTE).status_code == 200
    fetched = served.jwks.fetches
    new_kid = served.jwks.rotate()
    token = rs256(claims_for(carol.id), served.jwks, new_kid)
    with served.anonymous(Authorization=f"Bearer {token}") as client:
        assert client.get(ROUTE).status_code == 200
    assert served.jwks.fetches == fetched + 1, "an unknown key id fetches the key set once more"


def _forged() -> dict[str, str]:
    user = uuid.uuid4()
    now = int(time.time())
    return {
        "no token": "",
        "not a bearer token": "Basic dXNlcjpwYXNz",
        "garbage": "Bearer not-a-token",
        "wrong secret": "Bearer " + hs256(claims_for(user), "another-secret-of-thirty-two-bytes!!"),
        "expired": "Bearer " + hs256(claims_for(user, iat=now - 7200, exp=now - 3600)),
        "wrong audience": "Bearer " + hs256(claims_for(user, aud="someone-else")),
        "anon role": "Bearer " + hs256(claims_for(user, role="anon")),
        "service role": "Bearer " + hs256(claims_for(user, role="service_role")),
        "subject not a user id": "Bearer " + hs256(claims_for(user, sub="user123")),
        "no expiry": "Bearer " + hs256({k: v for k, v in claims_for(user).items() if k != "exp"}),
        "unsigned (alg none)": "Bearer " + jwt.encode(claims_for(user), None, algorithm="none"),
        "another HMAC algorithm": "Bearer " + jwt.encode(claims_for(user), SECRET * 2, algorithm="HS512"),
    }


@pytest.mark.parametrize("case", list(_forged()))
def test_a_missing_or_forged_token_is_401_and_changes_nothing(served: Served, case: str) -> None:
    header = _forged()[case]
    before = served.postgres_conn.execute("select count(*) from memory.conversations").fetchone()
    with served.anonymous(**({"Authorization": header} if header else {})) as client:
        response = client.post(ROUTE, json={"title": "Forged"})
    assert response.status_code == 401, (case, response.text)
    assert response.headers["www-authenticate"] == "Bearer"
    assert served.postgres_conn.execute("select count(*) from memory.conversations").fetchone() == before


def test_a_token_whose_algorithm_does_not_fit_its_key_is_401(served: Served) -> None:
    header = {"alg": "ES256", "typ": "JWT", "kid": served.jwks.latest}  # an RSA key of the project

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    token = f"{part(header)}.{part(claims_for(uuid.uuid4()))}.{part({'sig': 1})}"
    with served.anonymous(Authorization=f"Bearer {token}") as client:
        assert client.get(ROUTE).status_code == 401


def test_a_token_of_an_unknown_key_id_is_401(served: Served) -> None:
    kid = served.jwks.rotate()
    token = rs256(claims_for(uuid.uuid4()), served.jwks, kid)
    del served.jwks.keys[kid]  # published no more
    served.jwks.rotate()
    with served.anonymous(Authorization=f"Bearer {token}") as client:
        assert client.get(ROUTE).status_code == 401


def test_the_openapi_document_lists_every_route(served: Served) -> None:
    with served.anonymous() as client:
        spec = client.get("/openapi.json").json()
    for path in ("/chat", "/api/conversations", "/api/conversations/current", "/api/conversations/{conversation_id}",
                 "/api/conversations/{conversation_id}/messages", "/api/memories", "/api/memories/{memory_id}",
                 "/api/memories/extract", "/api/memories/export", "/api/memory-settings", "/api/profiles"):
        assert path in spec["paths"], path


def _operations(served: Served) -> list[tuple[str, str]]:
    with served.anonymous() as client:
        spec = client.get("/openapi.json").json()
    return [(method.upper(), path) for path, item in spec["paths"].items() for method in item]


def test_every_route_refuses_a_missing_or_forged_token(served: Served) -> None:
    operations = _operations(served)
    assert len(operations) >= 25
    forged = "Bearer " + hs256(claims_for(uuid.uuid4()), "another-secret-of-thirty-two-bytes!!")
    some_id = "00000000-0000-4000-8000-000000000000"
    for method, path in operations:
        url = path.replace("{conversation_id}", some_id).replace("{memory_id}", some_id).replace("{profile_id}", some_id)
        for header in ({}, {"Authorization": forged}):
            with served.anonymous(**header) as client:
                response = client.request(method, url, json={}, params={"profile_id": some_id, "year": 2026, "month": 1})
            assert response.status_code == 401, (method, path, header, response.status_code, response.text)
