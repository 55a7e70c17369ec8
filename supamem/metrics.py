"""Seed 004's success metrics: answers rated by the one who asked, the memory dashboard's visits,
and the monthly report (`memory.success_metrics`: creation and reference rates, helpfulness with
memories and held out, dashboard engagement, retention by memories kept, the duplicate rate).
"""

from __future__ import annotations

from datetime import date
from uuid import UUID

from pydantic import BaseModel

from .acting import Acting
from .identity import TenantKey, tenant_uuid


class SuccessMetrics(BaseModel):
    """One month (UTC) of seed 004's success metrics; a rate is None where its count is 0."""

    month: date
    active_users: int
    answers: int
    memories_added: int
    #: Target 0.5-2.0.
    memories_per_10_turns: float | None
    answers_with_memories: int
    #: Target 0.3 and more.
    reference_rate: float | None
    rated_with_memories: int
    helpful_with_memories: float | None
    rated_held_out: int
    helpful_held_out: float | None
    dashboard_users: int
    #: Target 0.2 a month.
    dashboard_engagement: float | None
    users_with_many_memories: int
    retained_with_many_memories: float | None
    users_with_fewer_memories: int
    retained_with_fewer_memories: float | None
    live_memories: int
    #: Target below 0.1.
    duplicate_rate: float | None


class MetricsService(Acting):
    """What the app records for the metrics, and the report (the service role's, or a tenant's)."""

    def rate_answer(
        self, message_id: int, helpful: bool | None, user_id: str | UUID, *, tenant_id: TenantKey = None
    ) -> bool | None:
        """The one who asked rates the answer (`helpful`; None takes the rating back).
        NotFoundError when `message_id` is not an answer to a question of theirs."""
        owner = self._owner(user_id, tenant_id, create=False)
        with self._transaction(owner) as tx:
            return tx.call_value("rate_answer", message_id=message_id, helpful=helpful, user_id=owner.id)

    def note_dashboard_visit(self, user_id: str | UUID, *, tenant_id: TenantKey = None) -> None:
        """The user opened the memory dashboard (counted once a day)."""
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            tx.call("note_dashboard_visit", user_id=owner.id)

    def success_metrics(
        self, month: date | None = None, *, tenant_id: TenantKey = None, many: int = 50
    ) -> SuccessMetrics:
        """The month's report (default: this month, UTC) over every user of every tenant, or one
        tenant's (`tenant_id`; here None is everyone, not the system's namespace); `many` is the
        memories a user keeps to count among those with many (seed 004: 50)."""
        with self.db.transaction() as tx:
            (row,) = tx.call("success_metrics", month=month, tenant_id=tenant_uuid(tenant_id), many=many)
        return SuccessMetrics.model_validate(row)
