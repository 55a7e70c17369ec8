"""Seed 000/001's chat endpoint, with seed 002's names: a question in, an answer out, remembered.

One request: embed the question with the database's embedding model (`SUPAMEM_EMBEDDING_*`;
when that fails the memories are chosen lexically and the chat goes on), find the session (a
missing, invalid or someone else's session id starts a new one) and read the prompt context in
one round trip (`memory.prompt_context`: the window of turns, the turn the question refers to,
the memories selected with the question's words and meaning, and the latest summaries), ask the
kit's LLM client, and store the turn with the ids of the memories the answer was given
(`add_turn(p_used_memory_ids)`, which counts their use). With `?stream=true` the answer comes
as server-sent events while the model writes it: a `token` event per piece, then, once the turn
is stored, a `done` event carrying the whole response (seed 002: messages are saved after the
stream completes); a model that fails before its first piece is a 502, one that fails after it
ends the stream with an `error` event and nothing is stored.

Seed 002's `conversation_id` is the session's other name, in the request and the response, and
its `context` (what the app knows of the moment: the page, a mode) is shown to the model.

Seed 004's prompt usage metrics: each answer is logged at INFO with the number of memories in its
prompt and its tokens (the provider's count, or an estimate). With `SUPAMEM_MEMORY_HOLDOUT` above
0 that share of conversations (fixed by id) is answered without the memories selected for it,
and every answer that had memories to offer is marked `memory_arm: holdout` or `memories` in its
metadata, so an app can compare helpfulness with and without them (`memory.memory_metrics`
counts both arms per day).

No transaction stays open while the embeddings server or the model answers: each would hold a
pooled connection for seconds, so a pool of ten would serve ten chats at a time. A model that
fails is a 502, and a session this request started is deleted again. A turn the database refuses
to store (seed 001: "continue anyway") still answers: the response carries the answer and an
`error` saying it was not stored, and a session this request started is deleted again.

A database that cannot be reached does not stop the chat (seed 001, property 8; chat_outage): the
answer comes with `degraded: true` and seed 001's `error` saying so, its turn written back on the
user's next request. Seed 001's turn `metadata` (what the app knows of the turn: its intent,
confidence, result count) is stored with both messages and given back with the kit's own keys.

A request may carry the client's `client_turn_id`: sent again (its response lost on the way), it
gets the turn stored under that id back (`replayed`), from the user's own conversations, without
asking the model; two copies at once store one turn, the later getting the earlier's. A turn held
through an outage keeps the id, so its write-back stores it once too.
"""

from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID, uuid4

import anyio
from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from jobs.llm import LLMError, Usage
from supamem.db import Transaction
from supamem.errors import ConflictError, DatabaseUnavailableError, SupamemError
from supamem.fallback import CLIENT_TURN_ID, check_buffered_text, log_degraded
from supamem.models import Turn
from supamem.short_term import CLARIFICATION_KEY

from . import chat_outage
from .chat_prompt import Offered, messages
from .deps import Claims
from .embedding import embedded
from .memories import used_memories
from .models import MEMORY_ARM, ChatRequest, ChatResponse, UsedMemory

router = APIRouter(tags=["chat"])
log = logging.getLogger(__name__)

#: A degraded answer's `error` (seed 001's field): what the user got instead of a failure.
OUTAGE = "the database could not be reached: answered without memories; the turn is stored once it can be"


def _named(session_id: str | None) -> UUID | None:
    """The session a request names, when it names one that could exist."""
    try:
        return UUID(session_id) if session_id else None
    except ValueError:
        return None


def _session(tx: Transaction, session_id: str | None, profile_id: UUID | None, ttl: timedelta | None) -> tuple[UUID, bool]:
    """The session to continue, or a new one (and whether it is new)."""
    wanted = _named(session_id)
    # Their own conversation, or one they take part in (together mode: the question is theirs).
    if wanted is not None and tx.execute(
        "select 1 from memory.conversations as c where c.id = %s and not c.archived and (c.user_id = (select auth.uid())"
        " or c.id = any((select memory_private.joined_conversations())::uuid[]))",
        [wanted],
    ):
        return wanted, False
    mode = "profile" if profile_id else "chat"
    return tx.call_one("create_conversation", mode=mode, profile_id=profile_id, ttl=ttl)["id"], True  # type: ignore[index]


def _stored_turn(tx: Transaction, client_turn_id: str, session: UUID | None) -> ChatResponse | None:
    """The turn the caller stored under `client_turn_id`, as it was answered: in their own
    conversations or, as a participant, in the named session's owner's (ids are kept per owner)."""
    rows = tx.execute(
        "select q.conversation_id, q.content as query, q.metadata, a.id, a.content, a.used_memory_ids"
        " from memory.messages as q"
        " join memory.messages as a on a.conversation_id = q.conversation_id and a.turn_number = q.turn_number"
        " and a.role = 'assistant'"
        " where q.user_id = any(array[(select auth.uid()), (select c.user_id from memory.conversations as c"
        " where c.id = %s)]) and coalesce(q.author_id, q.user_id) = (select auth.uid()) and q.role = 'user'"
        " and q.metadata ? 'client_turn_id' and q.metadata ->> 'client_turn_id' = %s",
        [session, client_turn_id],
    )
    if not rows:
        return None
    return ChatResponse(response=rows[0]["content"], query=rows[0]["query"], session_id=rows[0]["conversation_id"],
                        conversation_id=rows[0]["conversation_id"], replayed=True, metadata=rows[0]["metadata"],
                        answer_id=rows[0]["id"],
                        used_memories=used_memories(tx, rows[0]["used_memory_ids"]))


def _arm(holdout: float, session: UUID) -> str | None:
    """The conversation's A/B arm when some share is held out: fixed by its id, so a conversation
    stays in one arm."""
    if holdout <= 0:
        return None
    return "holdout" if int(session.hex[:8], 16) < holdout * 2**32 else "memories"


@dataclass
class _Question:
    """A question made ready to answer: its session, prompt context and the memories offered."""

    services: Any
    verified: dict[str, Any]
    user: UUID
    body: ChatRequest
    session: UUID
    started: bool
    context: dict[str, Any]
    offered: list[Offered]
    arm: str | None
    #: Read while the database could not be reached (chat_outage).
    outage: bool = False
    #: The turn a request sent before with the same client_turn_id stored: the answer, again.
    replayed: ChatResponse | None = None
    #: What reading the memories for the prompt took (the question's embedding and prompt_context).
    injection_ms: float = 0.0

    @property
    def chosen(self) -> list[Offered]:
        return [] if self.arm == "holdout" else self.offered

    def messages(self) -> list[dict[str, str]]:
        return messages(self.context, self.chosen, self.body)

    def _replay(self) -> ChatResponse | None:
        if self.body.client_turn_id is None:
            return None
        with self.services.db.transaction(claims=self.verified) as tx:
            return _stored_turn(tx, self.body.client_turn_id, self.session)

    def abandon(self) -> None:
        """No answer was stored (the model did not give one, or the database refused it): a session
        this request started is deleted again. Best effort, beside the failure being reported: one
        already gone, or a database gone too, is logged."""
        if not self.started:
            return
        try:
            with self.services.db.transaction(claims=self.verified) as tx:
                tx.call("delete_conversation", conversation_id=self.session)
        except SupamemError as exc:
            log.warning("the session this chat started was not deleted (user_id=%s, session_id=%s): %s",
                        self.user, self.session, exc)

    def finish(self, reply: str, usage: Usage) -> ChatResponse:
        """Log the answer's figures and store its turn (or hold it through an outage)."""
        _answered(self.user, self.session, usage, len(self.chosen), self.arm, self.injection_ms)
        services, key = self.services, chat_outage.key(self.user, self.session)
        used = [UUID(str(m.id)) for m in self.chosen]
        metadata: dict[str, Any] = {**self.body.metadata, MEMORY_ARM: self.arm} if self.arm else dict(self.body.metadata)
        if self.body.client_turn_id is not None:
            metadata[CLIENT_TURN_ID] = self.body.client_turn_id
        degraded = self.outage
        answer_id = error = None
        if not degraded:
            window = [Turn.from_row(t, user_id=str(self.user)) for t in self.context.get("history") or []]
            try:
                with services.db.transaction(claims=self.verified) as tx:
                    stored = tx.call_one("add_turn", conversation_id=self.session, user_content=self.body.message,
                                         assistant_content=reply, used_memory_ids=used, metadata=metadata)
                    if self.context.get("clarification") is not None:  # answered: asked once (not one asked since)
                        tx.call("short_term_delete", key=CLARIFICATION_KEY, value=self.context["clarification"])
                assert stored is not None
                answer_id = stored["assistant_message_id"]
                window.append(Turn(id=str(stored["user_message_id"]), session_id=str(self.session),
                                   user_id=str(self.user), turn_number=stored["turn_number"],
                                   query_text=self.body.message, response_text=reply, created_at=stored["created_at"]))
            except DatabaseUnavailableError as exc:
                log_degraded(log, "chat", self.session, self.user, exc)
                degraded = True
            except ConflictError:
                # The same client_turn_id stored by a copy of this request meanwhile: its turn stands.
                replayed = self._replay()
                if replayed is None:
                    raise
                self.abandon()
                services.monitoring.answered("replayed")
                return replayed
            except SupamemError as exc:
                # Seed 001: a turn that cannot be stored does not take the answer from the user.
                error = self._unstored(exc)
            # The window as it stands now: what an outage answers from.
            services.fallback.remember(key, window)
        if degraded:
            try:
                # Refused now, as the live write would refuse it: held, it would be dropped at write-back.
                check_buffered_text("response", reply)
            except SupamemError as exc:
                error = self._unstored(exc)
            else:
                services.fallback.append(key, str(self.user), self.body.message, reply, metadata, used,
                                         client_turn_id=self.body.client_turn_id, profile_id=self.body.profile_id)
        services.monitoring.answered("unstored" if error else "degraded" if degraded else "stored")
        return ChatResponse(response=reply, query=self.body.message, session_id=self.session, conversation_id=self.session,
                            degraded=degraded, metadata=metadata, error=error or (OUTAGE if degraded else None),
                            answer_id=answer_id,
                            used_memories=[UsedMemory(id=m.id, number=m.number, type=m.type, content=m.content)
                                           for m in self.chosen])

    def _unstored(self, exc: SupamemError) -> str:
        """The answer stands but its turn is not stored (the database refused it): logged as seed 001
        logs it, a session this request started goes, and the response's `error` says why."""
        log.error("failed to store the conversation turn (user_id=%s, session_id=%s): %s", self.user, self.session, exc)
        self.abandon()
        return f"the answer could not be stored: {exc}"


def _answered(user: UUID, session: UUID, usage: Usage, memories: int, arm: str | None, injection_ms: float) -> None:
    """Seed 004's prompt usage metrics: one INFO line per answer, its figures also as fields."""
    log.info(
        "chat answered (user_id=%s, session_id=%s): memories in the prompt: %d (read in %.1f ms); tokens: %d prompt,"
        " %d completion%s%s",
        user, session, memories, injection_ms, usage.prompt_tokens, usage.completion_tokens,
        " (estimated)" if usage.estimated else "", f", arm {arm}" if arm else "",
        extra={"supamem_operation": "chat", "supamem_user_id": str(user), "supamem_session_id": str(session),
               "supamem_memories": memories, "supamem_prompt_tokens": usage.prompt_tokens,
               "supamem_completion_tokens": usage.completion_tokens, "supamem_tokens_estimated": usage.estimated,
               "supamem_memory_arm": arm, "supamem_injection_ms": round(injection_ms, 3)},
    )


def _prepare(request: Request, verified: dict[str, Any], body: ChatRequest) -> _Question:
    """The question's session and prompt context, read in one transaction (after the user's turns
    held through an outage are written back); through an outage, what the server remembers."""
    services = request.app.state.supamem
    user = UUID(verified["sub"])
    # Refused before the model is asked: the database would refuse to store it.
    check_buffered_text("message", body.message)
    try:
        chat_outage.write_back(services, user)
        reading = time.perf_counter()
        vector = embedded(request, verified, body.message, "chat")
        with services.db.transaction(claims=verified) as tx:
            tx.call("register_user")
            replayed = (_stored_turn(tx, body.client_turn_id, _named(body.session))
                        if body.client_turn_id is not None else None)
            if replayed is not None:
                return _Question(services, verified, user, body, replayed.session_id, False, {}, [], None,
                                 replayed=replayed)
            session, started = _session(tx, body.session, body.profile_id, services.session_ttl)
            context = tx.call_value("prompt_context", conversation_id=session, query=body.message,
                                    query_embedding=vector, max_turns=services.history_turns)
            # Seed 001: a clarification the app asked for (short-term memory) is what this message answers.
            # Kept as the database's JSON text: shown to the model and compared when the turn clears it
            # as stored (through Python, a number past a float's range or precision would not compare).
            context["clarification"] = tx.execute("select memory.short_term_get(p_key => %s)::text as value",
                                                  [CLARIFICATION_KEY])[0]["value"]
    except DatabaseUnavailableError as exc:
        again = chat_outage.held(services, user, body.client_turn_id) if body.client_turn_id is not None else None
        if again is not None:
            session, turn = again
            replayed = ChatResponse(response=turn.response, query=turn.query, session_id=session, conversation_id=session,
                                    degraded=True, replayed=True, used_memories=[], metadata=turn.stored_metadata(),
                                    error=OUTAGE)
            return _Question(services, verified, user, body, session, False, {}, [], None, outage=True, replayed=replayed)
        session = _named(body.session) or uuid4()
        log_degraded(log, "chat", session, user, exc)
        return _Question(services, verified, user, body, session, False,
                         chat_outage.context(services, user, session, services.history_turns), [], None, outage=True)
    injection_ms = (time.perf_counter() - reading) * 1000
    offered = [Offered(m) for m in context.get("memories") or []]
    arm = _arm(services.memory_holdout, session) if offered else None
    return _Question(services, verified, user, body, session, started, context, offered, arm, injection_ms=injection_ms)


def answer(request: Request, verified: dict[str, Any], body: ChatRequest) -> ChatResponse:
    question = _prepare(request, verified, body)
    if question.replayed is not None:
        request.app.state.supamem.monitoring.answered("replayed")
        return question.replayed
    try:
        completion = request.app.state.supamem.llm.answer(question.messages())
        return question.finish(completion.value, completion.usage)
    except (LLMError, SupamemError):
        # No answer, or one the database refused (it is held through an outage, not refused).
        question.abandon()
        raise


def _event(name: str, data: str) -> str:
    return f"event: {name}\ndata: {data}\n\n"


class _Answering(StreamingResponse):
    """The events of an answer being written, closed as soon as the response ends: when the client
    goes away, the response is cancelled, and the events' own cleanup (stop the model, store
    nothing) runs then, in the thread pool, not whenever the generator is collected. Events never
    started (the client gone before the first byte was sent) have no cleanup of their own to run:
    `gone` is run for them."""

    def __init__(self, events: Generator[str, None, None], gone: Callable[[], None]) -> None:
        super().__init__(events, media_type="text/event-stream")
        self.events = events
        self.gone = gone

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._close)

    def _close(self) -> None:
        if inspect.getgeneratorstate(self.events) == inspect.GEN_CREATED:
            self.gone()
        self.events.close()


def streamed(request: Request, verified: dict[str, Any], body: ChatRequest) -> StreamingResponse:
    """The answer as the model writes it; the turn stored once it is whole."""
    question = _prepare(request, verified, body)
    if question.replayed is not None:
        request.app.state.supamem.monitoring.answered("replayed")
        replayed = question.replayed
        return StreamingResponse(
            iter([_event("token", json.dumps(replayed.response)), _event("done", replayed.model_dump_json())]),
            media_type="text/event-stream",
        )
    llm = request.app.state.supamem.llm
    prompt = question.messages()
    pieces = llm.stream(prompt)
    try:
        first = next(pieces)
    except LLMError:
        question.abandon()
        raise

    def gone() -> None:
        # The client went away before the answer was whole: as when the model stops mid-stream,
        # the model is stopped, nothing is stored and a session this request started goes.
        try:
            pieces.close()
        finally:
            question.abandon()
        log.info("the client went away mid-stream; nothing was stored (user_id=%s, session_id=%s)",
                 question.user, question.session)

    def events() -> Generator[str, None, None]:
        text = [first]
        stored = None
        try:
            yield _event("token", json.dumps(first))
            try:
                for piece in pieces:
                    text.append(piece)
                    yield _event("token", json.dumps(piece))
            except LLMError as exc:
                log.warning("the model stopped answering mid-stream (user_id=%s, session_id=%s): %s",
                            question.user, question.session, exc)
                question.abandon()
                yield _event("error", json.dumps({"detail": "the language model stopped answering; try again"}))
                return
            reply = "".join(text)
            try:
                stored = question.finish(reply, llm.usage(prompt, reply))
            except SupamemError as exc:  # the status line is long gone: the stream says it instead
                log.error("the streamed answer could not be stored (user_id=%s, session_id=%s): %s",
                          question.user, question.session, exc)
                question.abandon()
                yield _event("error", json.dumps({"detail": f"the answer could not be stored: {exc}"}))
                return
            yield _event("done", stored.model_dump_json())
        except GeneratorExit:
            if stored is None:
                gone()
            raise

    return _Answering(events(), gone)


@router.post("/chat", response_model=ChatResponse, summary="Send a message; get the answer, its session and the memories used",
             responses={200: {"content": {"text/event-stream": {}}}})
def chat(request: Request, verified: Claims, body: ChatRequest, stream: bool = Query(False)) -> Any:
    return streamed(request, verified, body) if stream else answer(request, verified, body)
