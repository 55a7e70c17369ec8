"""Seed 002's memory routes and seed 004's memory controls (pause, opt-in, undo, clear all,
export, summaries, the year-over-year comparison, an overview). Each is one kit function or one
RLS-bound read."""

from __future__ import annotations

import csv
import io
import json
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Depends, Query, Request, Response
from psycopg.types.json import Jsonb

from supamem.db import Transaction
from supamem.errors import InvalidInputError
from supamem.memories import wait_for_extraction
from supamem.memory_csv import read_csv, write_csv

from .deps import Claims, Tx, user_transaction, visible
from .embedding import Search, search_parameter
from .models import (
    Cleared,
    Extraction,
    ExtractRequest,
    Imported,
    Memory,
    MemoryChanges,
    MemorySettings,
    MemoryType,
    MemoryWritten,
    NewMemory,
    Overview,
    Queued,
    UsedMemory,
)

router = APIRouter(prefix="/api", tags=["memories"])

Status = Literal["active", "archived", "deleted", "superseded", "all"]


def _memory(tx: Tx, memory_id: UUID) -> Memory:
    return Memory.model_validate(visible(tx, "memories", memory_id, "memory"))


@router.get("/memories", response_model=list[Memory], summary="List or search the user's memories (filterable)")
def list_memories(
    search: Annotated[Search, search_parameter(
        "words to search: full text and meaning (hybrid), with a typo fallback")],
    tx: Tx,
    type: MemoryType | None = None,  # noqa: A002 - the seed's filter name
    category: str | None = None,
    profile_id: UUID | None = None,
    conversation_id: UUID | None = None,
    created_from: datetime | None = None,
    created_to: datetime | None = None,
    status: Status = "active",
    limit: int = Query(20, ge=1, le=200),
    offset: int = Query(0, ge=0, le=100_000),
) -> list[Memory]:
    rows = tx.call("search_memories", query=search.text, type=type, category=category, profile_id=profile_id,
                   conversation_id=conversation_id, created_from=created_from, created_to=created_to,
                   status=status, limit=limit, offset=offset,
                   query_embedding=search.vector)
    return [Memory.model_validate(r) for r in rows]


@router.post("/memories", response_model=MemoryWritten, status_code=201, summary="Create a memory by hand")
def create_memory(tx: Tx, body: NewMemory) -> MemoryWritten:
    row = tx.call_one("remember", content=body.content, type=body.type, profile_id=body.profile_id,
                      category=body.category, confidence=Decimal(str(body.confidence)), pinned=body.pinned)
    assert row is not None
    return MemoryWritten(memory=_memory(tx, row["memory_id"]), outcome=row["outcome"])


@router.put("/memories/{memory_id}", response_model=Memory,
            summary="Update a memory (a new version supersedes it) or pin / unpin it")
def update_memory(tx: Tx, memory_id: UUID, body: MemoryChanges) -> Memory:
    current = _memory(tx, memory_id)
    if {"content", "type", "category", "confidence"} & body.model_fields_set:
        current = Memory.model_validate(tx.call_one(
            # Left out, a field keeps its value: revise_memory takes it from the memory it locks.
            "revise_memory", memory_id=memory_id, content=body.content, type=body.type, category=body.category,
            confidence=None if body.confidence is None else Decimal(str(body.confidence))))
    if body.pinned is not None:
        current = Memory.model_validate(tx.call_one("pin_memory", memory_id=current.id, pinned=body.pinned))
    return current


@router.delete("/memories/{memory_id}", response_model=Memory, summary="Delete a memory (undo with restore)")
def delete_memory(tx: Tx, memory_id: UUID) -> Memory:
    return Memory.model_validate(tx.call_one("forget", memory_id=memory_id))


@router.post("/memories/{memory_id}/restore", response_model=Memory, summary="Undo a delete")
def restore_memory(tx: Tx, memory_id: UUID) -> Memory:
    return Memory.model_validate(tx.call_one("restore_memory", memory_id=memory_id))


@router.post("/memories/{memory_id}/undo", response_model=Memory,
             summary="Undo a memory just saved: an update gives way to the version it replaced")
def undo_memory(tx: Tx, memory_id: UUID) -> Memory:
    return Memory.model_validate(tx.call_one("undo_memory", memory_id=memory_id))


@router.post("/memories/{memory_id}/unarchive", response_model=Memory,
             summary="Bring an archived memory back into the live set (and into prompts)")
def unarchive_memory(tx: Tx, memory_id: UUID) -> Memory:
    return Memory.model_validate(tx.call_one("unarchive_memory", memory_id=memory_id))


@router.post("/memories/clear", response_model=Cleared, summary="Clear all memories (soft delete, undoable)")
def clear_memories(tx: Tx, profile_id: UUID | None = None) -> Cleared:
    return Cleared(cleared=tx.call_value("clear_memories", profile_id=profile_id) or 0)


@router.post("/memories/extract", response_model=Extraction,
             summary="Extract a conversation's turns not extracted yet; the memories it gave")
def extract_memories(request: Request, verified: Claims, body: ExtractRequest) -> Extraction:
    """Queues the turns not extracted yet (committed before any wait, so the worker sees them),
    waits up to `wait_seconds` for the worker in short transactions of its own (when one of
    ServerSettings.extraction_waiters places is free), and returns the caller's memories drawn
    from the conversation and how many turns still wait."""
    with contextmanager(user_transaction)(request, verified) as tx:
        visible(tx, "conversations", body.conversation_id, "conversation")
        queued = tx.call_value("request_extraction", conversation_id=body.conversation_id) or 0
    services = request.app.state.supamem
    # A wait holds a thread every synchronous route shares: past the places, answer at once.
    waiting = body.wait_seconds > 0 and services.extraction_waiters.acquire(blocking=False)
    try:
        pending, rows = wait_for_extraction(lambda: services.db.transaction(claims=verified), body.conversation_id,
                                            None, body.wait_seconds if waiting else 0)
    finally:
        if waiting:
            services.extraction_waiters.release()
    return Extraction(queued=queued, pending=pending, memories=[Memory.model_validate(r) for r in rows])


@router.put("/memory-settings", response_model=MemorySettings, summary="Pause memory building; opt in to long-term storage")
def set_memory_settings(tx: Tx, body: MemorySettings) -> MemorySettings:
    row = tx.call_one("set_memory_settings", memory_paused=body.memory_paused, long_term_opt_in=body.long_term_opt_in)
    return MemorySettings.model_validate(row)


@router.get("/memories/overview", response_model=Overview, summary="Counts by type and state, and the memory status")
def overview(tx: Tx) -> Overview:
    row = tx.execute(
        """select u.memory_paused, u.long_term_opt_in,
            (select p.id from memory.profiles as p where p.user_id = u.id and p.is_primary) as primary_profile_id,
            count(m.id) filter (where m.active and not m.archived and m.deleted_at is null) as live,
            count(m.id) filter (where m.pinned and m.active and m.deleted_at is null) as pinned,
            count(m.id) filter (where m.archived and m.deleted_at is null) as archived,
            count(m.id) filter (where m.deleted_at is not null) as deleted,
            -- Every version kept, deleted ones until they are purged: what the user's memory occupies.
            coalesce(sum(pg_column_size(m.*)) filter (where m.id is not null), 0) as storage_bytes
        from memory.users as u
        left join memory.memories as m on m.user_id = u.id
        where u.id = (select auth.uid())
        group by u.id""")[0]
    by_type = tx.execute(
        """select m.type, count(*) as n from memory.memories as m
        where m.user_id = (select auth.uid()) and m.active and not m.archived and m.deleted_at is null
        group by m.type order by m.type""")
    return Overview(**row, by_type={r["type"]: r["n"] for r in by_type})


@router.get("/memories/export", summary="Every field of every memory, as JSON or CSV (a download)")
def export_memories(tx: Tx, format: Literal["json", "csv"] = "json") -> Response:  # noqa: A002
    export: dict[str, Any] = tx.call_value("export_memories")
    if format == "json":
        return Response(json.dumps(export, default=str, indent=2), media_type="application/json",
                        headers={"Content-Disposition": 'attachment; filename="memories.json"'})
    out = io.StringIO()
    write_csv(export, out)
    return Response(out.getvalue(), media_type="text/csv",
                    headers={"Content-Disposition": 'attachment; filename="memories.csv"'})


async def _export_document(request: Request) -> dict[str, Any]:
    """The export to import: the JSON document as exported, or the CSV download (`text/csv`:
    memories only, as `supamem import` reads it)."""
    raw = await request.body()
    try:
        if request.headers.get("content-type", "").split(";")[0].strip().lower() == "text/csv":
            return read_csv(raw.decode("utf-8"))
        document = json.loads(raw)
    except (ValueError, csv.Error) as exc:  # bad UTF-8, JSON or CSV, a row the model refuses
        raise InvalidInputError(f"not a supamem export: {exc}") from exc
    if not isinstance(document, dict):
        raise InvalidInputError("not a supamem export: expected a JSON object")
    return document


@router.post("/memories/import", response_model=Imported,
             summary="Re-import an export (the JSON document, or the CSV download as text/csv); idempotent",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": {"type": "object"}}, "text/csv": {"schema": {"type": "string"}}}}})
def import_memories(tx: Tx, export: Annotated[dict[str, Any], Depends(_export_document)]) -> Imported:
    return Imported(imported=tx.call_value("import_memories", export=Jsonb(export)) or 0)


@router.post("/summaries/backfill", response_model=Queued,
             summary="Queue a month's weekly and monthly summaries again (seed 004's ?action=backfill)")
def backfill(tx: Tx, profile_id: UUID, year: int = Query(ge=1970, le=9999), month: int = Query(ge=1, le=12),
             regenerate: bool = False) -> Queued:
    return Queued(queued=tx.call_value("backfill_month", profile_id=profile_id, year=year, month=month,
                                       regenerate=regenerate) or 0)


@router.get("/summaries/weekly", summary="Weekly summaries, newest first")
def weekly_summaries(tx: Tx, profile_id: UUID | None = None, limit: int = Query(12, ge=1, le=200)) -> list[dict[str, Any]]:
    return tx.execute(
        """select * from memory.weekly_summaries where user_id = (select auth.uid())
        and (%(profile)s::uuid is null or profile_id = %(profile)s::uuid)
        order by week_start_date desc limit %(limit)s""", {"profile": profile_id, "limit": limit})


@router.get("/summaries/monthly", summary="The monthly summary archive, newest first")
def monthly_summaries(tx: Tx, profile_id: UUID | None = None, limit: int = Query(24, ge=1, le=200)) -> list[dict[str, Any]]:
    return tx.execute(
        """select * from memory.monthly_summaries where user_id = (select auth.uid())
        and (%(profile)s::uuid is null or profile_id = %(profile)s::uuid)
        order by year desc, month desc limit %(limit)s""", {"profile": profile_id, "limit": limit})


@router.post("/summaries/compare", summary="Year over year: this month against the same month last year")
def compare_year(tx: Tx, profile_id: UUID, year: int = Query(ge=1971, le=9999),
                 month: int = Query(ge=1, le=12)) -> dict[str, Any]:
    return tx.call_value("compare_year", profile_id=profile_id, year=year, month=month)


# Declared last: /memories/overview and /memories/export are not ids.
@router.get("/memories/metrics", summary="Per day (UTC): answers, answers using memories or holding them out, "
            "memories added and referenced, turns extracted (seed 004's metrics)")
def metrics(tx: Tx, days: int = Query(30, ge=1, le=366), user_id: UUID | None = None) -> list[dict[str, Any]]:
    """The signed-in user's own figures, or (for their tenant's admin) those of `user_id`."""
    return tx.call("memory_metrics", since=datetime.now(UTC) - timedelta(days=days), user_id=user_id)


def used_memories(tx: Transaction, ids: list[UUID]) -> list[UsedMemory]:
    """Seed 004's memory chips: the memories of `ids` the caller may read and has not deleted, in
    the order given (another person's, in a shared conversation, are theirs alone)."""
    rows = tx.execute("select id, number, type, content from memory.memories where id = any(%s) and deleted_at is null", [ids])
    order = {m: i for i, m in enumerate(ids)}
    return [UsedMemory(**m) for m in sorted(rows, key=lambda m: order[m["id"]])]


@router.get("/memories/{memory_id}", response_model=Memory, summary="One memory")
def get_memory(tx: Tx, memory_id: UUID) -> Memory:
    return _memory(tx, memory_id)
