"""Seed 004's success metrics over HTTP: the asker rates an answer, the memory dashboard notes its
opening, and a tenant's admin reads a month's report. Each is one kit function."""

from __future__ import annotations

from datetime import date
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict

from supamem.metrics import SuccessMetrics

from .deps import Tx

router = APIRouter(prefix="/api", tags=["metrics"])


class Rating(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: Helpful or not; null takes the rating back.
    helpful: bool | None


class Rated(Rating):
    message_id: int


@router.put("/messages/{message_id}/rating", response_model=Rated,
            summary="Rate an answer to your question as helpful or not (seed 004's reference uplift)")
def rate(tx: Tx, message_id: int, body: Rating) -> Rated:
    return Rated(message_id=message_id, helpful=tx.call_value("rate_answer", message_id=message_id, helpful=body.helpful))


@router.post("/dashboard-visits", status_code=204, summary="The memory dashboard was opened (counted once a day)")
def visit(tx: Tx) -> Response:
    tx.call("note_dashboard_visit")
    return Response(status_code=204)


@router.get("/metrics/success", response_model=SuccessMetrics,
            summary="A month of seed 004's success metrics for a tenant you administer")
def success(tx: Tx, tenant_id: UUID, month: date | None = None, many: int = Query(50, ge=1)) -> SuccessMetrics:
    (row,) = tx.call("success_metrics", month=month, tenant_id=tenant_id, many=many)
    return SuccessMetrics.model_validate(row)
