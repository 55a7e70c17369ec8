"""Seed 000's prompt format for a conversation history.

    Previous conversation:
    Turn 1:
    User: <query>
    AI: <response>

    Turn 2:
    User: <query>
    AI: <response>

Turn numbers are the stored ones (after the 10-turn window slides, the first shown turn may be
"Turn 11"). An empty history formats as "".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

HEADER = "Previous conversation:"


def _fields(turn: Mapping[str, Any] | Any) -> tuple[Any, str, str]:
    if isinstance(turn, Mapping):
        return turn["turn_number"], turn["user_query"], turn["ai_response"]
    return turn.turn_number, turn.query_text, turn.response_text  # a models.Turn


def format_history_for_prompt(history: Iterable[Mapping[str, Any] | Any]) -> str:
    blocks = [
        f"Turn {number}:\nUser: {query}\nAI: {response}"
        for number, query, response in map(_fields, history)
    ]
    if not blocks:
        return ""
    return HEADER + "\n" + "\n\n".join(blocks)


__all__ = ["format_history_for_prompt"]
