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

Seed 004's prompt usage metrics: each answer is logged at INFO with the number of memories in its
prompt and its tokens (the provider's count, or an estimate). With `SUPAMEM_MEMORY_HOLDOUT` above
0 that share of conversations (fixed by id) is answered without the memories selected for it,
and every answer that had memories to offer is marked `memory_arm: holdout` or `memories` in its
metadata, so an app can compare helpfulness with and without them (`memory.memory_metrics`
counts both arms per day).

No transaction stays open while the embeddings server or the model answers: each would hold a
pooled connection for seconds, so a pool of ten would serve ten chats at a time. A model that
fails is a 502, and a session this request started is deleted again.

A database that cannot be reached does not stop the chat (seed 001, property 8): the model is
asked with the session's last window read by this server plus the turns answered since (no
memories, no summary), the answer comes back with `degraded: true`, and the turn waits in this
server's memory (supamem.fallback, keyed by user and session; a new session gets its id here)
until the user's next request reaches the database, which writes it back first, exactly once,
into that session (made with that id when no conversation has it). A WARNING names the user and
session. Buffered turns live in this process only: a restart before the write-back loses them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from jobs.llm import Completion, LLMError
from supamem.db import Transaction
from supamem.errors import DatabaseUnavailableError
from supamem.fallback import check_buffered_text, flush, log_degraded, write_back_session
from supamem.formatting import format_history_for_prompt
from supamem.memories import MemoryService
from supamem.models import Turn

from .deps import Claims
from .embedding import embedded
from .models import ChatRequest, ChatResponse, UsedMemory

router = APIRouter(tags=["chat"])
log = logging.getLogger(__name__)

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


def _key(user: UUID, session: UUID) -> str:
    return f"chat:{user}:{session}"


def _write_back(services: Any, user: UUID) -> None:
    """The user's turns answered during an outage go in before anything else is read."""
    prefix = f"chat:{user}:"
    if not services.fallback.has_pending(prefix):
        return

    def create(tx: Transaction, session: UUID | None) -> UUID:
        return tx.call_one("create_conversation", user_id=user, id=session)["id"]  # type: ignore[index]

    flush(services.fallback, prefix, services.flush_lock,
          lambda key, turns: write_back_session(services.db, UUID(key.removeprefix(prefix)), turns, user, create))


def _arm(holdout: float, session: UUID) -> str | None:
    """The conversation's A/B arm when some share is held out: fixed by its id, so a conversation
    stays in one arm."""
    if holdout <= 0:
        return None
    return "holdout" if int(session.hex[:8], 16) < holdout * 2**32 else "memories"


def _answered(user: UUID, session: UUID, completion: Completion[str], memories: int, arm: str | None) -> None:
    """Seed 004's prompt usage metrics: one INFO line per answer, its figures also as fields."""
    usage = completion.usage
    log.info(
        "chat answered (user_id=%s, session_id=%s): memories in the prompt: %d; tokens: %d prompt, %d completion%s%s",
        user, session, memories, usage.prompt_tokens, usage.completion_tokens,
        " (estimated)" if usage.estimated else "", f", arm {arm}" if arm else "",
        extra={"supamem_operation": "chat", "supamem_user_id": str(user), "supamem_session_id": str(session),
               "supamem_memories": memories, "supamem_prompt_tokens": usage.prompt_tokens,
               "supamem_completion_tokens": usage.completion_tokens, "supamem_tokens_estimated": usage.estimated,
               "supamem_memory_arm": arm},
    )


def _degraded(services: Any, user: UUID, body: ChatRequest, exc: DatabaseUnavailableError) -> ChatResponse:
    """The answer while the database cannot be reached, its turn buffered (see the module doc)."""
    check_buffered_text("message", body.message)
    try:
        session = UUID(body.session or "")
    except ValueError:
        session = uuid4()
    log_degraded(log, "chat", session, user, exc)
    key = _key(user, session)
    shown = services.fallback.view(key, None, session_id=str(session), limit=10)
    context = {"history": [{"turn_number": t.turn_number, "user_content": t.query_text,
                            "assistant_content": t.response_text} for t in shown]}
    completion = services.llm.answer(_messages(context, [], body))
    reply = completion.value
    _answered(user, session, completion, 0, None)
    services.fallback.append(key, str(user), body.message, reply, None)
    return ChatResponse(response=reply, session_id=session, conversation_id=session, used_memories=[], degraded=True)


def answer(request: Request, verified: dict[str, Any], body: ChatRequest) -> ChatResponse:
    services = request.app.state.supamem
    user = UUID(verified["sub"])
    try:
        _write_back(services, user)
        vector = embedded(request, verified, body.message)
        with services.db.transaction(claims=verified) as tx:
            tx.call("register_user")
            session, started = _session(tx, body.session, body.profile_id)
            context = tx.call_value("prompt_context", conversation_id=session, query=body.message,
                                    query_embedding=vector)
    except DatabaseUnavailableError as exc:
        return _degraded(services, user, body, exc)
    key = _key(user, session)
    window = [Turn.from_row(t, user_id=str(user)) for t in context.get("history") or []]
    offered = [_Chosen(m) for m in context.get("memories") or []]
    arm = _arm(services.memory_holdout, session) if offered else None
    chosen = [] if arm == "holdout" else offered
    try:
        completion = services.llm.answer(_messages(context, chosen, body))
    except LLMError:
        if started:
            with services.db.transaction(claims=verified) as tx:
                tx.call("delete_conversation", conversation_id=session)
        raise
    reply = completion.value
    _answered(user, session, completion, len(chosen), arm)
    used = [UUID(str(m.id)) for m in chosen]
    metadata = {"memory_arm": arm} if arm else {}
    degraded = False
    try:
        with services.db.transaction(claims=verified) as tx:
            stored = tx.call_one("add_turn", conversation_id=session, user_content=body.message, assistant_content=reply,
                                 used_memory_ids=used, metadata=metadata)
        assert stored is not None
        window.append(Turn(id=str(stored["user_message_id"]), session_id=str(session), user_id=str(user),
                           turn_number=stored["turn_number"], query_text=body.message, response_text=reply,
                           created_at=stored["created_at"]))
    except DatabaseUnavailableError as exc:
        log_degraded(log, "chat", session, user, exc)
        check_buffered_text("message", body.message)
        services.fallback.append(key, str(user), body.message, reply, metadata, used)
        degraded = True
    # The window as it stands now: what an outage answers from.
    services.fallback.remember(key, window)
    return ChatResponse(response=reply, session_id=session, conversation_id=session, degraded=degraded,
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
