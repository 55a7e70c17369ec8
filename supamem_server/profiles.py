"""Seed 004's profiles: the user's own, one of them primary ("My Main Profile"). Memories are
made only in conversations where the primary profile is selected."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter
from psycopg.types.json import Jsonb

from .deps import Tx, UserId
from .models import NewProfile, Profile

router = APIRouter(prefix="/api/profiles", tags=["profiles"])


@router.get("", response_model=list[Profile], summary="The user's profiles, the primary one first")
def list_profiles(tx: Tx) -> list[Profile]:
    rows = tx.execute(
        "select * from memory.profiles where user_id = (select auth.uid()) order by is_primary desc, created_at, id")
    return [Profile.model_validate(r) for r in rows]


@router.post("", response_model=Profile, status_code=201, summary="Add a profile (primary: it becomes the main one)")
def create_profile(tx: Tx, user: UserId, body: NewProfile) -> Profile:
    row = tx.execute(
        "insert into memory.profiles (user_id, name, timezone, attributes) values (%s, %s, %s, %s) returning *",
        [user, body.name, body.timezone, Jsonb(body.attributes)],
    )[0]
    if body.primary:
        row = tx.call_one("set_primary_profile", profile_id=row["id"])
    return Profile.model_validate(row)


@router.post("/{profile_id}/primary", response_model=Profile,
             summary="Make a profile the main one (memories made before keep their profile)")
def make_primary(tx: Tx, profile_id: UUID) -> Profile:
    return Profile.model_validate(tx.call_one("set_primary_profile", profile_id=profile_id))  # P0002: not theirs
