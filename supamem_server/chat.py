"""Seed 000/001's chat endpoint, with seed 002's names: a question in, an answer out, remembered.

One request: embed the question with the database's embedding model (`SUPAMEM_EMBEDDING_*`;
when that fails the memories are chosen lexically and the chat goes on), find the session (a
missing, invalid or someone else's session id starts a new one) and read the prompt context in
one round trip (`memory.prompt_context`: the window of turns, the turn the question refers to,
the memories selected with the question's words and meaning, and the latest summaries), ask the
kit's LLM client, and store the turn with the ids of the memories the answer was given
(`add_turn(p_used_memory_ids)`, which counts their use). With `?stream=true` the answer comes
as server-sent events: `token` events, then a `done` event carrying the whole response. Seed
002's `conversation_id` is the session's other name, in the request and the response, and its
`context` (what the app knows of the moment: the page, a mode) is shown to the model.

No transaction stays open while the embeddings server or the model answers: each would hold a
pooled connection for seconds, so a pool of ten would serve ten chats at a time. A model that
fails is a 502, and a session this request started is deleted again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from jobs.llm import LLMError
from supamem.db import Transaction
from supamem.formatting import format_history_for_prompt
from supamem.memories import MemoryService

from .deps import Claims
from .embedding import embedded
from .models import ChatRequest, ChatResponse, UsedMemory

router = APIRouter(tags=["chat"])

SYSTEM_PROMPT = "You are a helpful assistant. Use what you know about the user when it helps; never invent it."


class _Chosen:
    def __init__(self, row: dict[str, Any]) -> None:
        self.id, self.type, self.content, self.pinned = row["id"], row["type"], row["content"], row.get("pinned", False)


def _session(tx: Transaction, session_id: str | None, profile_id: UUID | None) -> tuple[UUID, bool]:
    """The session to continue, or a new one (and whether it is new)."""
    if session_id:
        try:
            wanted = UUID(session_id)
        except ValueError:
            wanted = None
        if wanted is not None and tx.execute(
            "select 1 from memory.conversations where id = %s and user_id = (select auth.uid()) and not archived",
            [wanted],
        ):
            return wanted, False
    mode = "profile" if profile_id else "chat"
    return tx.call_one("create_conversation", mode=mode, profile_id=profile_id)["id"], True  # type: ignore[index]


def _messages(context: dict[str, Any], chosen: list[_Chosen], body: ChatRequest) -> list[dict[str, str]]:
    """The system prompt: the app's context (seed 002), the memories, the conversation's summary, the
    window of turns and the turn the question points at (seed 000: "User is referring to: ...")."""
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
    referenced = context.get("referenced_turn")
    if referenced:
        system += f"\n\nUser is referring to: {referenced['user_content']}"
        if referenced.get("assistant_content"):
            system += f"\nYou answered then: {referenced['assistant_content']}"
    return [{"role": "system", "content": system}, {"role": "user", "content": body.message}]


def answer(request: Request, verified: dict[str, Any], body: ChatRequest) -> ChatResponse:
    services = request.app.state.supamem
    vector = embedded(request, verified, body.message)
    with services.db.transaction(claims=verified) as tx:
        tx.call("register_user")
        session, started = _session(tx, body.session, body.profile_id)
        context = tx.call_value("prompt_context", conversation_id=session, query=body.message, query_embedding=vector)
    chosen = [_Chosen(m) for m in context.get("memories") or []]
    try:
        reply = services.llm.reply(_messages(context, chosen, body))
    except LLMError:
        if started:
            with services.db.transaction(claims=verified) as tx:
                tx.call("delete_conversation", conversation_id=session)
        raise
    with services.db.transaction(claims=verified) as tx:
        tx.call("add_turn", conversation_id=session, user_content=body.message, assistant_content=reply,
                used_memory_ids=[m.id for m in chosen])
    return ChatResponse(response=reply, session_id=session, conversation_id=session,
                        used_memories=[UsedMemory(id=m.id, type=m.type, content=m.content) for m in chosen])


def _events(response: ChatResponse) -> Iterator[str]:
    for word in response.response.split(" "):
        yield f"event: token\ndata: {json.dumps(word + ' ')}\n\n"
    yield f"event: done\ndata: {response.model_dump_json()}\n\n"


@router.post("/chat", response_model=ChatResponse, summary="Send a message; get the answer, its session and the memories used",
             responses={200: {"content": {"text/event-stream": {}}}})
def chat(request: Request, verified: Claims, body: ChatRequest, stream: bool = Query(False)) -> Any:
    result = answer(request, verified, body)
    if stream:
        return StreamingResponse(_events(result), media_type="text/event-stream")
    return result
