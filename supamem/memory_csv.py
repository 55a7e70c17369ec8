"""Seed 004's flattened export of a user's memories as CSV, written by `supamem export` and by
the HTTP app's `GET /api/memories/export?format=csv`, read back by `supamem import`.

One row per memory; the header is the column names of memory.memories (in table order, then any
column a newer export adds); json values and arrays are JSON text, booleans true/false, a null an
empty cell. A text cell a spreadsheet would take for a formula (starting with =, +, -, @, a tab or
a carriage return: a memory's content is what a user or a model wrote) is written with a leading
apostrophe, as a cell that starts with one is, so reading drops exactly one. A CSV export carries
memories only: importing it recreates each profile it names as "Imported profile" (the first one
primary, unless the user already has a primary profile).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any, TextIO

from .memories import MEMORY_COLUMNS, Memory

EXPORT_FORMAT = "supamem.memories"
EXPORT_VERSION = 1
IMPORTED_PROFILE_NAME = "Imported profile"
#: What a spreadsheet reads as the start of a formula, and the apostrophe that quotes it.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_columns(memories: Iterable[dict[str, Any]]) -> list[str]:
    """memory.memories' columns in table order, then any column a newer export adds."""
    extra: list[str] = []
    for memory in memories:
        extra.extend(k for k in memory if k not in MEMORY_COLUMNS and k not in extra and k != "search")
    return [*MEMORY_COLUMNS, *sorted(extra)]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _uncell(text: str | None) -> str | None:
    if not text:  # empty, or missing from a short row
        return None
    return text[1:] if text.startswith("'") else text


def write_csv(export: dict[str, Any], out: TextIO) -> int:
    """Write the export's memories as CSV; returns the number of rows."""
    memories = export.get("memories") or []
    columns = csv_columns(memories)
    writer = csv.writer(out)  # CRLF rows, so a field holding a lone \r is quoted too
    writer.writerow(columns)
    for memory in memories:
        writer.writerow([_cell(memory.get(c)) for c in columns])
    return len(memories)


def read_csv(text: str) -> dict[str, Any]:
    """A CSV export back as an export document (profiles recreated, see the module docs)."""
    memories = []
    profiles: dict[str, dict[str, Any]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        record: dict[str, Any] = {k: _uncell(v) for k, v in row.items() if k}
        if record.get("context") is not None:
            record["context"] = json.loads(record["context"])
        # Typed through the model (UUIDs, timestamps, numbers, booleans), then back to JSON.
        memory = Memory.model_validate(record).model_dump(mode="json", exclude={"outcome"})
        memories.append(memory)
        profile = memory["profile_id"]
        if profile not in profiles:
            profiles[profile] = {
                "id": profile,
                "name": IMPORTED_PROFILE_NAME,
                "is_primary": not profiles,  # one primary at most (memory.import_memories keeps one)
                "timezone": "UTC",
                "attributes": {},
                "created_at": memory["created_at"],
            }
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "profiles": list(profiles.values()),
        "memories": memories,
    }
