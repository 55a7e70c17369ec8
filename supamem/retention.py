"""Run the retention sweep on demand (pg_cron runs it every 5 minutes anyway).

Expired rows are already invisible to every read; sweeping only reclaims the space. The SQL
deletes one bounded batch per table per call (`memory.sweep_expired`); this loop calls it, each
call resuming where the last stopped, until a batch comes back short, so one call never holds locks for long, and at most
`sweep_max_batches` times, as pg_cron's `memory_private.run_retention_sweep()` does. Both bounds
are the database's settings (`sweep_batch_size`, `sweep_max_batches` in
`memory_private.settings`), read once per call, unless the caller passes its own.
"""

from __future__ import annotations

from uuid import UUID

from psycopg.types.json import Jsonb

from .db import Database
from .errors import SupamemError

COUNTS = ("messages_deleted", "conversations_deleted", "short_term_deleted")
SETTINGS = ("sweep_batch_size", "sweep_max_batches")


def sweep_settings(db: Database) -> dict[str, int]:
    """The sweep's `sweep_batch_size` and `sweep_max_batches` settings (one query)."""
    with db.transaction() as tx:
        rows = tx.execute(
            "select s.key, (s.value)::integer as value from memory_private.settings as s where s.key = any(%s)",
            [list(SETTINGS)],
        )
    found = {r["key"]: r["value"] for r in rows}
    missing = [k for k in SETTINGS if found.get(k) is None]
    if missing:  # the migrations insert both; a deleted row is a broken installation
        raise SupamemError(f"memory_private.settings has no {', '.join(missing)} (run the migrations)")
    return found


def sweep(
    db: Database,
    *,
    user_id: UUID | None = None,
    batch_size: int | None = None,
    max_batches: int | None = None,
) -> dict[str, int]:
    """Sweep expired rows (of one user, or everyone's); returns the totals per table.

    `batch_size` None lets `memory.sweep_expired` use its setting; `max_batches` None bounds the
    loop by the `sweep_max_batches` setting.
    """
    settings = sweep_settings(db)
    # A batch is short when it deleted fewer rows than the size the SQL used.
    full = batch_size if batch_size is not None else settings["sweep_batch_size"]
    rounds = max_batches if max_batches is not None else settings["sweep_max_batches"]
    totals = dict.fromkeys(COUNTS, 0)
    resume = None  # where the last batch stopped: the next one starts there
    for _ in range(rounds):
        row = db.call_one(
            "sweep_expired", batch_size=batch_size, user_id=user_id, resume=None if resume is None else Jsonb(resume)
        ) or {}
        resume = row.get("resume")
        counts = {name: row.get(name) or 0 for name in COUNTS}
        for name, count in counts.items():
            totals[name] += count
        if max(counts.values()) < full:
            break
    return totals


__all__ = ["sweep", "sweep_settings"]
