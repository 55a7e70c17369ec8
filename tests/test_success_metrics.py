"""Seed 004's success metrics through the kit's own interfaces: the HTTP routes (an answer rated
by the one who asked, the dashboard's visit, a tenant admin's monthly report) and MetricsService
for app servers. The figures themselves are pgTAP's (supabase/tests/metrics)."""

from __future__ import annotations

import uuid

import pytest
from server_helpers import Served

from supamem import ConversationService, Database, NotFoundError
from supamem.metrics import MetricsService


def _tenant_with_admin(served: Served, *members: uuid.UUID) -> tuple[uuid.UUID, object]:
    conn = served.postgres_conn
    (tenant,) = conn.execute("insert into memory.tenants (name) values (%s) returning id",
                             [f"t-{uuid.uuid4().hex[:8]}"]).fetchone()
    admin = served.person()
    admin.http.get("/api/profiles")  # registers them
    conn.execute("insert into memory.tenant_admins (tenant_id, user_id) values (%s, %s)", [tenant, admin.id])
    conn.execute("update memory.users set tenant_id = %s where id = any(%s)", [tenant, list(members)])
    return tenant, admin


def test_the_asker_rates_an_answer_over_http(served: Served) -> None:
    ivy, stranger = served.person(), served.person()
    answered = ivy.http.post("/chat", json={"message": "Plan my running week"}).json()
    answer = answered["answer_id"]
    assert isinstance(answer, int)
    assert ivy.http.put(f"/api/messages/{answer}/rating", json={"helpful": True}).json() == {
        "message_id": answer, "helpful": True}
    assert stranger.http.put(f"/api/messages/{answer}/rating", json={"helpful": False}).status_code == 404
    assert ivy.http.put(f"/api/messages/{answer - 1}/rating", json={"helpful": False}).status_code == 404, "a question"
    assert ivy.http.put(f"/api/messages/{answer}/rating", json={"helpful": "very", "stars": 5}).status_code == 422
    assert ivy.http.put(f"/api/messages/{answer}/rating", json={}).status_code == 422, "say which, or null"
    messages = ivy.http.get(f"/api/conversations/{answered['session_id']}").json()["messages"]
    assert [m["helpful"] for m in messages] == [None, True], "refused calls changed nothing"
    assert ivy.http.put(f"/api/messages/{answer}/rating", json={"helpful": None}).json()["helpful"] is None


def test_a_tenant_admin_reads_the_month_and_nobody_else_does(served: Served) -> None:
    jo, kim = served.person(), served.person()
    rated = jo.http.post("/chat", json={"message": "Plan my running week"}).json()["answer_id"]
    jo.http.put(f"/api/messages/{rated}/rating", json={"helpful": True})
    kim.http.post("/chat", json={"message": "Hello"})
    assert jo.http.post("/api/dashboard-visits").status_code == 204
    tenant, admin = _tenant_with_admin(served, jo.id, kim.id)

    report = admin.http.get("/api/metrics/success", params={"tenant_id": str(tenant)})
    assert report.status_code == 200, report.text
    figures = report.json()
    assert (figures["active_users"], figures["answers"], figures["dashboard_users"], figures["dashboard_engagement"]) == (
        2, 2, 1, 0.5)
    assert figures["reference_rate"] == 0.0 and figures["helpful_with_memories"] is None, "no arm, no uplift figure"
    assert jo.http.get("/api/metrics/success", params={"tenant_id": str(tenant)}).status_code == 403
    other, _ = _tenant_with_admin(served)
    assert admin.http.get("/api/metrics/success", params={"tenant_id": str(other)}).status_code == 403
    assert admin.http.get("/api/metrics/success", params={"tenant_id": str(tenant), "many": 0}).status_code == 422


def test_metrics_service_serves_an_app_with_its_own_user_ids(client_db: Database, make_id) -> None:
    metrics = MetricsService(client_db)
    conversations = ConversationService(client_db, identity=metrics.identity)
    tenant = f"metrics-{uuid.uuid4().hex[:8]}"
    user, other = make_id("rater"), make_id("other")
    conversation = conversations.create_conversation(user, tenant_id=tenant)
    conversations.add_message(conversation.id, {"role": "user", "content": "Plan my week"})
    answer = conversations.add_message(conversation.id, {"role": "assistant", "content": "Four runs."})
    assert metrics.rate_answer(answer.id, True, user, tenant_id=tenant) is True
    conversations.add_message(conversations.create_conversation(other, tenant_id=tenant).id,
                              {"role": "user", "content": "Hi"})
    with pytest.raises(NotFoundError):
        metrics.rate_answer(answer.id, False, other, tenant_id=tenant)
    metrics.note_dashboard_visit(user, tenant_id=tenant)
    metrics.note_dashboard_visit(user, tenant_id=tenant)

    report = metrics.success_metrics(tenant_id=tenant)
    assert (report.active_users, report.answers, report.dashboard_users, report.dashboard_engagement) == (1, 1, 1, 1.0)
    assert report.users_with_fewer_memories == 1 and report.users_with_many_memories == 0
