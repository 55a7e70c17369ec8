"""Seed 004's together mode over HTTP: the owner of a conversation adds people to it, each of them
chooses their own profile for it (their words feed their own memory, never the owner's), and
anyone leaves or is removed by the owner. Row-level security on `memory.participants` decides
every one of these; a participant then continues the conversation through `/chat` with its id,
and their questions are stored as theirs (`author_id`)."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel

from supamem.errors import NotFoundError

from .deps import Tx, visible
from .models import Row

router = APIRouter(prefix="/api/conversations/{conversation_id}/participants", tags=["participants"])


class Participant(Row):
    conversation_id: UUID
    user_id: UUID
    joined_at: datetime


class MyParticipation(Participant):
    #: The profile the caller chose for the conversation (only they may read it).
    profile_id: UUID | None = None


class NewParticipant(BaseModel):
    user_id: UUID


class ChosenProfile(BaseModel):
    #: One of the participant's own profiles (their Main Profile builds their memory), or none.
    profile_id: UUID | None = None


_COLUMNS = "conversation_id, user_id, joined_at"


@router.get("", response_model=list[Participant], summary="The people who share the conversation")
def list_participants(tx: Tx, conversation_id: UUID) -> list[Participant]:
    visible(tx, "conversations", conversation_id, "conversation")
    rows = tx.execute(f"select {_COLUMNS} from memory.participants where conversation_id = %s order by joined_at, user_id",
                      [conversation_id])
    return [Participant.model_validate(r) for r in rows]


@router.post("", response_model=Participant, status_code=201, summary="Add someone (the owner only)")
def add_participant(tx: Tx, conversation_id: UUID, body: NewParticipant) -> Participant:
    visible(tx, "conversations", conversation_id, "conversation")
    rows = tx.execute(
        f"insert into memory.participants (conversation_id, user_id) values (%s, %s) returning {_COLUMNS}",
        [conversation_id, body.user_id],
    )
    return Participant.model_validate(rows[0])


def _mine(tx: Tx, conversation_id: UUID) -> MyParticipation:
    rows = tx.execute(
        f"select {_COLUMNS}, memory_private.chosen_profile(conversation_id) as profile_id from memory.participants"
        " where conversation_id = %s and user_id = (select auth.uid())", [conversation_id])
    if not rows:
        raise NotFoundError("you do not take part in this conversation", sqlstate="P0002")
    return MyParticipation.model_validate(rows[0])


@router.get("/me", response_model=MyParticipation, summary="Your part in a conversation, with the profile you chose")
def my_participation(tx: Tx, conversation_id: UUID) -> MyParticipation:
    return _mine(tx, conversation_id)


@router.put("/me", response_model=MyParticipation, summary="Choose your own profile for a conversation you take part in")
def choose_profile(tx: Tx, conversation_id: UUID, body: ChosenProfile) -> MyParticipation:
    tx.execute("update memory.participants set profile_id = %s where conversation_id = %s and user_id = (select auth.uid())",
               [body.profile_id, conversation_id])
    return _mine(tx, conversation_id)


@router.delete("/{user_id}", status_code=204, summary="Leave, or (the owner) remove someone")
def remove_participant(tx: Tx, conversation_id: UUID, user_id: UUID) -> Response:
    rows = tx.execute("delete from memory.participants where conversation_id = %s and user_id = %s returning user_id",
                      [conversation_id, user_id])
    if not rows:
        raise NotFoundError("no such participant", sqlstate="P0002")
    return Response(status_code=204)
