"""What the chat endpoint asks the model: one system message built from the prompt context, then
the question."""

from __future__ import annotations

import json
from typing import Any

from supamem.formatting import format_history_for_prompt
from supamem.memories import MemoryService

from .models import ChatRequest

SYSTEM_PROMPT = "You are a helpful assistant. Use what you know about the user when it helps; never invent it."


class Offered:
    """A memory `prompt_context` selected for the prompt."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.id, self.type, self.content, self.pinned = row["id"], row["type"], row["content"], row.get("pinned", False)
        self.number: int = row["number"]


def messages(context: dict[str, Any], chosen: list[Offered], body: ChatRequest) -> list[dict[str, str]]:
    """The system prompt: the app's context (seed 002), the memories, the conversation's summary, the
    window of turns, the clarification the message answers (seed 001's short-term memory) and the
    turn the question points at (seed 000: "User is referring to: ...")."""
    system = SYSTEM_PROMPT
    if body.context:
        system += "\n\n## Context\n" + "".join(f"- {key}: {json.dumps(value)}\n" for key, value in body.context.items())
    system += MemoryService.system_prompt_block(chosen)
    summary = context.get("conversation_summary")
    if summary:
        system += f"\n\n## Conversation Summary\n{summary['summary']}"
    history = format_history_for_prompt(
        {"turn_number": t["turn_number"], "user_query": t["user_content"] or "", "ai_response": t["assistant_content"] or ""}
        for t in context.get("history") or []
    )
    if history:
        system += f"\n\n{history}"
    clarification = context.get("clarification")
    if clarification is not None:
        system += ("\n\n## Pending clarification\nYou asked the user to clarify this; their message answers it:\n"
                   + clarification)
    referenced = context.get("referenced_turn")
    if referenced:
        system += f"\n\nUser is referring to: {referenced['user_content']}"
        if referenced.get("assistant_content"):
            system += f"\nYou answered then: {referenced['assistant_content']}"
    return [{"role": "system", "content": system}, {"role": "user", "content": body.message}]
