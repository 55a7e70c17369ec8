"""Run the retention sweep on demand (pg_cron runs it every 5 minutes anyway).

Expired rows are already invisible to every read; sweeping only reclaims the space. The SQL
deletes one bounded batch per table per call (`memory.sweep_expired`); this loop calls it until
a batch comes back short, so one call never holds locks for long.
"""

from __future__ import annotations

from uuid import UUID

from .db import Database

COUNTS = ("messages_deleted", "conversations_deleted", "short_term_deleted")


def sweep(
    db: Database, *, user_id: UUID | None = None, batch_size: int = 5000, max_batches: int = 1000
) -> dict[str, int]:
    """Sweep expired rows (of one user, or everyone's); returns the totals per table."""
    totals = dict.fromkeys(COUNTS, 0)
    for _ in range(max_batches):
        row = db.call_one("sweep_expired", batch_size=batch_size, user_id=user_id) or {}
        counts = {name: row.get(name) or 0 for name in COUNTS}
        for name, count in counts.items():
            totals[name] += count
        if max(counts.values()) < batch_size:
            break
    return totals


__all__ = ["sweep"]
