"""Every route of the HTTP app, read from its own OpenAPI document (so a new route is covered the
day it lands), called by a signed-in user with hostile input in each place a request carries it:
path parameters that are not ids, query values of the wrong type or far out of range, bodies of
the wrong shape, megabyte strings, NUL bytes, deep nesting, huge numbers. Each answer must be a
refusal (4xx) or a success, never a 500: bad input gets a clear error and changes nothing of
anyone else's (the database side of that is tests/test_adversarial.py)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from server_helpers import Served

MEGA = "x" * 1_000_000
#: As long as a URL may carry (httpx refuses to send one past 64 kB).
LONG = "x" * 30_000
NUL = "a\u0000b"
DEEP: Any = {}
for _ in range(500):
    DEEP = {"a": DEEP}

#: The live stream answers for as long as the client stays: its hostile inputs are the query's.
STREAMING = {("get", "/api/events")}


def _hostile_scalars(schema: dict[str, Any], long: str = LONG) -> list[Any]:
    kind = schema.get("type") or next((s.get("type") for s in schema.get("anyOf", []) if s.get("type") != "null"), None)
    common: list[Any] = [long, NUL, "", "🙂" * 1000]
    if kind == "integer":
        return [*common, -1, 2**63, -(2**63) - 1, "1e400"]
    if kind == "number":
        return [*common, 1e308, "NaN", "Infinity"]
    if kind == "boolean":
        return [*common, "maybe"]
    return [*common, "not-a-uuid", str(uuid.uuid4()), "' or 1=1 --"]


def _plausible(schema: dict[str, Any], own: dict[str, str]) -> Any:
    """A value the schema accepts, so a hostile neighbour is what the route meets."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"] or [schema]
    schema = options[0]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return own["id"] if schema.get("format") == "uuid" else "hello"


def _bodies(schema: dict[str, Any], components: dict[str, Any], own: dict[str, str]) -> list[Any]:
    ref = schema.get("$ref")
    if ref:
        schema = components[ref.rsplit("/", 1)[-1]]
    properties = schema.get("properties") or {}
    bodies: list[Any] = [None, [], "text", 1, DEEP, {"unknown": MEGA}, dict.fromkeys(properties, MEGA)]
    # Each hostile value alone, and beside plausible values of the required fields, so it reaches
    # the route's own checks, not only the request's validation.
    required = {name: _plausible(properties[name], own) for name in schema.get("required", []) if name in properties}
    for name, prop in properties.items():
        for value in [*_hostile_scalars(prop), DEEP, {"x": NUL}]:
            bodies.append({name: value})
            if set(required) - {name}:
                bodies.append({**required, name: value})
    return bodies


def _routes(client: httpx.Client) -> list[tuple[str, str, dict[str, Any]]]:
    spec = client.get("/openapi.json").json()
    return [(method, path, op) for path, item in spec["paths"].items() for method, op in item.items()
            if method in {"get", "post", "put", "patch", "delete"}]


def _cases(spec_op: dict[str, Any], components: dict[str, Any], own: dict[str, str]) -> list[dict[str, Any]]:
    """Requests with one hostile part each, the rest plausible (the caller's own ids)."""
    params = spec_op.get("parameters", [])
    path_values = {p["name"]: own.get(p["name"], own["id"]) for p in params if p["in"] == "path"}
    cases: list[dict[str, Any]] = []
    for p in params:
        for value in _hostile_scalars(p.get("schema", {})):
            if p["in"] == "path":
                cases.append({"path": {**path_values, p["name"]: value}})
            elif p["in"] == "query":
                cases.append({"path": path_values, "query": {p["name"]: value}})
    body = (spec_op.get("requestBody") or {}).get("content", {}).get("application/json")
    if body:
        cases.extend({"path": path_values, "json": b} for b in _bodies(body["schema"], components, own))
    return cases or [{"path": path_values}]


def _url(path: str, values: dict[str, Any]) -> str:
    for name, value in values.items():
        path = path.replace("{" + name + "}", httpx.URL("/", params={"v": str(value)}).query.decode()[2:])
    return path


def test_no_hostile_request_gets_a_500(served: Served) -> None:
    person = served.person()
    conversation = person.http.post("/api/conversations", json={"title": "Mine"}).json()["id"]
    own = {"id": conversation, "conversation_id": conversation}
    spec = person.http.get("/openapi.json").json()
    components = spec.get("components", {}).get("schemas", {})
    failures: list[str] = []
    requests = 0
    for method, path, op in _routes(person.http):
        if (method, path) in STREAMING:
            continue
        for case in _cases(op, components, own):
            url = _url(path, case.get("path", {}))
            kwargs: dict[str, Any] = {"params": case.get("query")}
            if "json" in case:
                kwargs["json"] = case["json"]
            response = person.http.request(method.upper(), url, **kwargs)
            requests += 1
            if response.status_code >= 500:
                shown = {k: (str(v)[:60] if v is not None else v) for k, v in case.items()}
                failures.append(f"{method.upper()} {path} {shown}: {response.status_code} {response.text[:160]}")
    assert requests > 500, f"the OpenAPI document lists the routes ({requests} requests)"
    assert failures == []


@pytest.mark.parametrize("route", [("get", "/api/events")])
def test_the_live_stream_refuses_hostile_queries(served: Served, route: tuple[str, str]) -> None:
    person = served.person()
    spec = person.http.get("/openapi.json").json()
    op = spec["paths"][route[1]][route[0]]
    for p in op.get("parameters", []):
        for value in _hostile_scalars(p.get("schema", {})):
            with person.http.stream("GET", route[1], params={p["name"]: value}) as response:
                assert response.status_code < 500, (p["name"], str(value)[:60])
