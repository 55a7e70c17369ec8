"""Seed 001's and seed 004's monitoring: what the app does, as Prometheus metrics at `GET /metrics`
(the text format any Prometheus, Grafana Agent or OpenTelemetry collector scrapes), one registry
per app:

- `supamem_http_requests_total{method, route, status}` and `supamem_http_request_seconds{method,
  route}`: error rates and latency percentiles per route (the route's template, never an id);
- `supamem_chat_answers_total{outcome}`: `stored`, `degraded` (the database unreachable: held for
  write-back, seed 001's fallback), `unstored` (the database refused the turn: given, not
  stored), `replayed` (a request sent again);
- `supamem_held_turns`: turns held through an outage, waiting for their write-back;
- `supamem_database_available`: 0 while the database is known to be unreachable (the pool
  reconnecting), else 1.

Alert on `supamem_database_available == 0` for a few minutes (seed 001's sustained database
failures) and on the share of 5xx. The figures are counts and times: no user's data is in them.
"""

from __future__ import annotations

import hmac
import time
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

Outcome = Literal["stored", "degraded", "unstored", "replayed"]
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

router = APIRouter(tags=["monitoring"])


class Monitoring:
    """The app's metrics, in a registry of its own."""

    def __init__(self, services: Any, token: str | None = None) -> None:
        #: The scraper's bearer token (ServerSettings.metrics_token); None: /metrics is open.
        self.token = token
        self.registry = CollectorRegistry()
        self.requests = Counter("supamem_http_requests", "HTTP requests by route and status",
                                ["method", "route", "status"], registry=self.registry)
        self.seconds = Histogram("supamem_http_request_seconds", "HTTP request duration by route (a stream: until it ends)",
                                 ["method", "route"], registry=self.registry)
        self.answers = Counter("supamem_chat_answers", "Chat answers by what became of their turn", ["outcome"],
                               registry=self.registry)
        Gauge("supamem_held_turns", "Turns held through an outage until their write-back",
              registry=self.registry).set_function(lambda: len(services.fallback))
        Gauge("supamem_database_available", "0 while the database is known to be unreachable",
              registry=self.registry).set_function(lambda: float(not services.db.is_down))

    def answered(self, outcome: Outcome) -> None:
        self.answers.labels(outcome).inc()


class Measured:
    """ASGI middleware timing every HTTP request by its route's template. Plain ASGI, so a streamed
    answer's disconnect reaches the route as it would without it."""

    def __init__(self, app: ASGIApp, monitoring: Monitoring) -> None:
        self.app = app
        self.monitoring = monitoring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            # The router names the matched route on the scope; anything else is one label.
            route = getattr(scope.get("route"), "path", "unmatched")
            # A client names the method: one label for any other, so made-up ones add no series.
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            self.monitoring.requests.labels(method, route, str(status)).inc()
            self.monitoring.seconds.labels(method, route).observe(time.perf_counter() - started)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    monitoring = request.app.state.supamem.monitoring
    if monitoring.token is not None and not hmac.compare_digest(
        request.headers.get("authorization", "").encode(), f"Bearer {monitoring.token}".encode()
    ):
        return Response("metrics need the scraper's token", status_code=401, headers={"WWW-Authenticate": "Bearer"})
    return Response(generate_latest(monitoring.registry), media_type=CONTENT_TYPE_LATEST)
