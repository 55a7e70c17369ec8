"""Seed 001's and seed 004's monitoring at GET /metrics: requests by route and status with their
latency, chat answers by what became of their turn, held turns and whether the database is up,
in Prometheus' text format, read as a scraper reads it."""

from __future__ import annotations

import psycopg
from llm_server import ScriptedLLMServer, chat_completion, llm_server  # noqa: F401 (fixture)
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import serve

from jobs.llm import LLMClient, LLMSettings
from supamem_server.settings import ServerSettings


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_count_requests_answers_and_outages(
    database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    model = LLMClient(LLMSettings(provider="openai", base_url=llm_server.base_url, api_key="k", max_retries=0))
    for served in serve(database_url, postgres_conn, llm=model):
        kim = served.person()
        llm_server.enqueue(chat_completion("Four runs."), chat_completion("x" * 100_001))
        body = {"message": "Plan my week", "client_turn_id": "t1"}
        assert kim.http.post("/chat", json=body).status_code == 200
        assert kim.http.post("/chat", json=body).json()["replayed"] is True
        assert kim.http.post("/chat", json={"message": "Say a lot"}).json()["error"]
        assert kim.http.get("/api/conversations/not-an-id").status_code == 422
        scraped = served.anonymous().get("/metrics")
        assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
        samples = _samples(scraped.text)
        answers = {outcome: samples.get(("supamem_chat_answers_total", (("outcome", outcome),)), 0)
                   for outcome in ("stored", "replayed", "unstored", "degraded")}
        assert answers == {"stored": 1, "replayed": 1, "unstored": 1, "degraded": 0}
        chats = (("method", "POST"), ("route", "/chat"), ("status", "200"))
        assert samples[("supamem_http_requests_total", chats)] == 3
        assert samples[("supamem_http_requests_total",
                        (("method", "GET"), ("route", "/api/conversations/{conversation_id}"), ("status", "422")))] == 1
        timed = (("method", "POST"), ("route", "/chat"))
        assert samples[("supamem_http_request_seconds_count", timed)] == 3
        assert samples[("supamem_http_request_seconds_sum", timed)] > 0
        assert samples[("supamem_held_turns", ())] == 0 and samples[("supamem_database_available", ())] == 1
        assert kim.id.hex not in scraped.text and str(kim.id) not in scraped.text, "counts, never a user's data"


def test_a_metrics_token_keeps_other_scrapers_out(database_url: str, postgres_conn: psycopg.Connection) -> None:
    for served in serve(database_url, postgres_conn, metrics_token="scraper-secret"):
        anyone = served.anonymous()
        assert anyone.get("/metrics").status_code == 401
        assert anyone.get("/metrics", headers={"Authorization": "Bearer guess"}).status_code == 401
        assert anyone.get("/metrics", headers={"Authorization": "Bearer scraper-secret"}).status_code == 200
    assert ServerSettings.from_env({"SUPABASE_JWT_SECRET": "s", "SUPAMEM_METRICS_TOKEN": "t"}).metrics_token == "t"
