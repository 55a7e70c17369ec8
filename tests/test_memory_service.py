"""Seed 002's MemoryService on the real database: every method, the prompt block, ownership,
export -> erase -> import, and the `supamem export | import | erase` command line."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from client_helpers import run_cli, users_with_external_id
from job_helpers import running_worker
from pydantic import ValidationError

from supamem import ConversationMemoryManager, ConversationStore, Database, FallbackBuffer
from supamem.errors import (
    ExtractionPendingError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    SupamemError,
)
from supamem.memories import (
    MEMORY_COLUMNS,
    Memory,
    MemoryCreate,
    MemoryFilters,
    MemoryService,
    SelectedMemory,
)

# -- helpers ------------------------------------------------------------------------------------


@pytest.fixture
def service(client_db) -> MemoryService:
    return MemoryService(client_db)


def rows_of(postgres_conn: psycopg.Connection, query: str, params: Any = None) -> list[dict[str, Any]]:
    cur = postgres_conn.execute(query, params)
    names = [d.name for d in cur.description or []]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def stored(postgres_conn: psycopg.Connection, user: UUID) -> list[dict[str, Any]]:
    """Every memory of a user, every column but `search`, by id."""
    cols = ", ".join(MEMORY_COLUMNS)
    return rows_of(postgres_conn, f"select {cols} from memory.memories where user_id = %s order by id", [user])


def history_count(postgres_conn: psycopg.Connection, memory_id: UUID) -> int:
    query = "select count(*) from memory.memory_events where memory_id = %s"
    return postgres_conn.execute(query, [memory_id]).fetchone()[0]


@pytest.fixture
def new_user(service: MemoryService, postgres_conn: psycopg.Connection, make_auth_user) -> Iterator[Callable[..., Any]]:
    """Make users with a primary profile: external ids (served as service_role) or Supabase Auth
    users (`auth=True`, served through RLS). Everything they own is erased afterwards."""
    made: list[tuple[str | UUID, UUID | None]] = []

    def make(*, auth: bool = False, tenant: Any = None) -> SimpleNamespace:
        key: str | UUID = make_auth_user() if auth else f"mem-{uuid4().hex[:12]}"
        profile = service.ensure_primary_profile(key, tenant_id=tenant)
        uid = service.resolve_user(key, tenant)
        made.append((key, key if auth else None))
        return SimpleNamespace(key=key, id=uid, profile=profile, tenant=tenant, auth=auth)

    yield make
    for key, auth_id in made:
        postgres_conn.execute(
            "delete from memory.users where id = %s or external_id = %s", [auth_id, str(key)]
        )
        if auth_id is not None:
            postgres_conn.execute("delete from auth.users where id = %s", [auth_id])


def remember(service: MemoryService, user: SimpleNamespace, content: str, type_: str = "fact", **kw: Any) -> Memory:
    return service.create_memory(user.key, MemoryCreate(content=content, type=type_, **kw), tenant_id=user.tenant)


# -- create_memory --------------------------------------------------------------------------------


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_create_memory_adds_then_dedups(service, new_user, auth):
    user = new_user(auth=auth)
    first = remember(service, user, "Is training for the Auckland marathon in March", "goal", confidence=0.7)
    assert isinstance(first, Memory)
    assert (first.outcome, first.user_id, first.profile_id) == ("added", user.id, user.profile)
    assert (first.type, first.confidence, first.reference_count, first.status) == ("goal", 0.7, 0, "active")
    again = remember(service, user, "is training for the Auckland marathon in March!", "goal", confidence=0.9)
    assert again.outcome == "duplicate"
    assert again.id == first.id
    assert again.content == first.content  # the stored memory, not the new wording
    assert (again.reference_count, again.confidence) == (1, 0.9)  # referenced once more, higher confidence
    assert again.last_referenced_at is not None


def test_create_memory_fields_and_seed_names(service, new_user, postgres_conn):
    user = new_user()
    expires = datetime.now(UTC) + timedelta(days=3)
    memory = service.create_memory(
        user.key,
        {"memory_text": "Prefers tea over coffee", "memory_type": "preference", "category": "food",
         "confidence_score": 0.65, "context": {"transits": ["venus"]}, "is_pinned": True, "expires_at": expires},
    )
    assert (memory.content, memory.type, memory.category, memory.confidence) == (
        "Prefers tea over coffee", "preference", "food", 0.65)
    assert memory.context == {"transits": ["venus"]}
    assert memory.pinned and memory.is_pinned and memory.memory_type == "preference"
    assert abs((memory.expires_at - expires).total_seconds()) < 1e-3
    (row,) = stored(postgres_conn, user.id)
    assert Memory.model_validate(row) == memory.model_copy(update={"outcome": None})


def test_create_memory_at_the_cap_is_archived_and_says_so(service, new_user, postgres_conn):
    """At memory_cap with every other live memory pinned, the newcomer is stored archived and
    the outcome is memory.remember's own word for it, validated like every other field."""
    user = new_user()
    pinned = remember(service, user, "Is vegetarian", "fact", pinned=True)
    (saved,) = postgres_conn.execute("select value::text from memory_private.settings where key = 'memory_cap'").fetchone()
    postgres_conn.execute("update memory_private.settings set value = '1' where key = 'memory_cap'")
    try:
        memory = remember(service, user, "Plays the cello on Sundays", "pattern")
    finally:
        postgres_conn.execute("update memory_private.settings set value = %s::jsonb where key = 'memory_cap'", [saved])
    assert memory.outcome == "archived: memory cap reached"
    assert memory.archived and memory.status == "archived" and memory.id != pinned.id
    assert Memory.model_validate(memory.model_dump()) == memory
    with pytest.raises(ValidationError):
        Memory.model_validate({**memory.model_dump(), "outcome": "archived"})
    assert {r["id"]: r["archived"] for r in stored(postgres_conn, user.id)} == {pinned.id: False, memory.id: True}


def test_create_memory_on_another_profile(service, new_user, postgres_conn):
    user = new_user()
    other = postgres_conn.execute(
        "insert into memory.profiles (user_id, name) values (%s, 'Partner') returning id", [user.id]
    ).fetchone()[0]
    a = remember(service, user, "Has a dog called Miso")
    b = remember(service, user, "Has a dog called Miso", profile_id=other)
    assert b.outcome == "added" and b.id != a.id  # dedup is per profile
    assert b.profile_id == other


def test_a_first_memory_makes_the_primary_profile_but_a_secondary_one_is_not_guessed(service, make_id, postgres_conn):
    key = make_id("noprofile")
    stored = service.create_memory(key, {"content": "Likes jazz", "type": "preference"})
    assert postgres_conn.execute(
        "select is_primary from memory.profiles where id = %s", [stored.profile_id]
    ).fetchone() == (True,)
    service.erase(key)
    other = make_id("secondary")
    user = service.resolve_user(other)
    postgres_conn.execute("insert into memory.profiles (user_id, name) values (%s, 'Work')", [user])
    with pytest.raises(InvalidInputError) as err:
        service.create_memory(other, {"content": "Likes jazz", "type": "preference"})
    assert err.value.sqlstate == "23502" and "primary profile" in (err.value.hint or "")
    service.erase(other)


def test_create_memory_rejects_bad_input(service, new_user):
    user = new_user()
    with pytest.raises(InvalidInputError):
        remember(service, user, "Likes jazz", "not_a_type")
    with pytest.raises(InvalidInputError):
        remember(service, user, "   ")
    with pytest.raises(ValidationError):
        MemoryCreate(content="x", type="fact", confidence=1.5)


def test_create_memory_from_a_message_follows_the_gate(service, new_user, client_db):
    user = new_user()
    profiled = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile, mode="astro")
    generic = client_db.call_one("create_conversation", user_id=user.id)
    message = client_db.call_one("add_message", conversation_id=profiled["id"], role="user", content="I run every day")
    memory = remember(service, user, "Runs every day", "pattern", source_message_id=message["id"])
    assert (memory.source_conversation_id, memory.source_message_id) == (profiled["id"], message["id"])
    assert (memory.turn_index, memory.origin_mode) == (1, "astro")
    closed = client_db.call_one("add_message", conversation_id=generic["id"], role="user", content="I swim")
    with pytest.raises(PermissionDeniedError, match="no profile is selected"):
        remember(service, user, "Swims", "pattern", source_message_id=closed["id"])


# -- get_memories ---------------------------------------------------------------------------------


def test_get_memories_filters(service, new_user, client_db, postgres_conn):
    user = new_user()
    conversation = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile)
    message = client_db.call_one("add_message", conversation_id=conversation["id"], role="user", content="marathon!")
    goal = remember(service, user, "Is training for a marathon", "goal", category="health",
                    source_message_id=message["id"])
    fact = remember(service, user, "Works as a nurse in Wellington", "fact", category="work")
    emotion = remember(service, user, "Felt anxious about the exam", "emotion")
    archived = remember(service, user, "Used to play the cello", "fact")
    postgres_conn.execute("update memory.memories set archived = true where id = %s", [archived.id])
    deleted = remember(service, user, "Owns a red bicycle", "fact")
    service.delete_memory(deleted.id, user.key)
    revised = service.update_memory(fact.id, user.key, {"content": "Works as a nurse in Christchurch"})
    other = postgres_conn.execute(
        "insert into memory.profiles (user_id, name) values (%s, 'Work') returning id", [user.id]
    ).fetchone()[0]
    on_other = remember(service, user, "Leads the night shift team", "project", profile_id=other)

    def ids(**filters: Any) -> set[UUID]:
        return {m.id for m in service.get_memories(user.key, MemoryFilters(**filters))}

    assert ids() == {goal.id, revised.id, emotion.id, on_other.id}
    assert service.get_memories(user.key) == service.get_memories(user.key, MemoryFilters())
    assert ids(type="goal") == {goal.id}
    assert ids(category="work") == {revised.id}
    assert ids(profile_id=other) == {on_other.id}
    assert ids(conversation_id=conversation["id"]) == {goal.id}
    assert ids(query="marathn") == {goal.id}  # a typo still finds it (trigram word similarity)
    assert ids(query="nurse christchurch") == {revised.id}
    assert ids(status="archived") == {archived.id}
    assert ids(status="deleted") == {deleted.id}
    assert ids(status="superseded") == {fact.id}
    assert ids(status="all") == {goal.id, fact.id, revised.id, emotion.id, archived.id, deleted.id, on_other.id}
    created = {m.id: m.created_at for m in service.get_memories(user.key, {"status": "all"})}
    cut = created[emotion.id]
    assert ids(status="all", created_from=cut) == {i for i, t in created.items() if t >= cut}
    assert ids(status="all", created_to=cut) == {i for i, t in created.items() if t < cut}
    page1 = service.get_memories(user.key, {"status": "all", "limit": 4})
    page2 = service.get_memories(user.key, {"status": "all", "limit": 4, "offset": 4})
    assert len(page1) == 4 and len(page2) == 3
    assert {m.id for m in page1} | {m.id for m in page2} == ids(status="all")
    with pytest.raises(ValidationError):
        MemoryFilters(status="gone")
    with pytest.raises(ValidationError):
        MemoryFilters(limit=0)


# -- update_memory, delete_memory, undo_delete ----------------------------------------------------


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_update_memory_supersedes(service, new_user, postgres_conn, auth):
    user = new_user(auth=auth)
    old = remember(service, user, "Sister Ana lives in Wellington", "relationship", category="family")
    new = service.update_memory(old.id, user.key, {"content": "Sister Ana moved to Christchurch"})
    assert new.id != old.id
    assert (new.content, new.type, new.category, new.active) == (
        "Sister Ana moved to Christchurch", "relationship", "family", True)
    before = {r["id"]: r for r in stored(postgres_conn, user.id)}
    assert before[old.id]["content"] == "Sister Ana lives in Wellington"  # never edited in place
    assert (before[old.id]["active"], before[old.id]["superseded_by"]) == (False, new.id)
    # A type or confidence change supersedes too, keeping the content.
    typed = service.update_memory(new.id, user.key, {"memory_type": "fact", "confidence": 0.95})
    assert (typed.content, typed.type, typed.confidence) == (new.content, "fact", 0.95)
    assert typed.id != new.id
    # Pinning changes the memory itself (no new version).
    pinned = service.update_memory(typed.id, user.key, {"pinned": True})
    assert (pinned.id, pinned.pinned) == (typed.id, True)
    assert service.pin_memory(typed.id, user.key, False).pinned is False
    # Both at once: the new version is pinned.
    both = service.update_memory(typed.id, user.key, {"content": "Sister Ana lives in Dunedin", "is_pinned": True})
    assert both.id != typed.id and both.pinned
    # A superseded memory cannot be revised again.
    with pytest.raises(SupamemError) as err:
        service.update_memory(old.id, user.key, {"content": "anything"})
    assert err.value.sqlstate == "55000"
    with pytest.raises(InvalidInputError, match="cannot update user_id"):
        service.update_memory(both.id, user.key, {"user_id": str(uuid4())})
    with pytest.raises(InvalidInputError):
        service.update_memory(both.id, user.key, {})
    chain = [r for r in stored(postgres_conn, user.id) if r["active"]]
    assert [r["id"] for r in chain] == [both.id]


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_set_primary_profile_moves_the_main_profile(service, new_user, postgres_conn, auth):
    user, stranger = new_user(auth=auth), new_user(auth=auth)
    before = remember(service, user, "Grows tomatoes", "fact")
    (work,) = postgres_conn.execute(
        "insert into memory.profiles (user_id, name) values (%s, 'Work') returning id", [user.id]).fetchone()
    with pytest.raises(NotFoundError):
        service.set_primary_profile(work, stranger.key)
    assert service.set_primary_profile(work, user.key) == work
    primaries = postgres_conn.execute(
        "select id from memory.profiles where user_id = %s and is_primary", [user.id]).fetchall()
    assert primaries == [(work,)]
    assert remember(service, user, "Leads the data team", "fact").profile_id == work
    assert service.get_memory(before.id, user.key).profile_id == user.profile


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_undo_save_puts_back_the_version_an_update_replaced(service, new_user, auth):
    user, stranger = new_user(auth=auth), new_user(auth=auth)
    old = remember(service, user, "Lives in Porto", "fact")
    new = service.update_memory(old.id, user.key, {"content": "Lives in Berlin"})
    with pytest.raises(NotFoundError):
        service.undo_save(new.id, stranger.key)
    standing = service.undo_save(new.id, user.key)
    assert (standing.id, standing.content, standing.active) == (old.id, "Lives in Porto", True)
    fresh = remember(service, user, "Keeps bees", "fact")
    gone = service.undo_save(fresh.id, user.key)
    assert (gone.id, gone.deleted_at is not None) == (fresh.id, True)


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_delete_and_undo(service, new_user, postgres_conn, auth):
    user = new_user(auth=auth)
    memory = remember(service, user, "Allergic to peanuts", "fact", pinned=True)
    assert service.delete_memory(memory.id, user.key) is True
    (row,) = stored(postgres_conn, user.id)
    assert row["deleted_at"] is not None and row["active"] is False  # soft: still there
    assert service.get_memories(user.key) == []
    with pytest.raises(NotFoundError):
        service.delete_memory(memory.id, user.key)  # already deleted
    restored = service.undo_delete(memory.id, user.key)
    assert (restored.id, restored.active, restored.deleted_at, restored.pinned) == (memory.id, True, None, True)
    with pytest.raises(NotFoundError):
        service.undo_delete(memory.id, user.key)  # nothing to undo
    assert [m.id for m in service.get_memories(user.key)] == [memory.id]
    events = [r["event"] for r in rows_of(
        postgres_conn, "select event from memory.memory_events where memory_id = %s order by id", [memory.id])]
    assert events == ["add", "delete", "restore"]


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_unarchive(service, new_user, postgres_conn, auth):
    """The way back from the archive (memory.unarchive_memory): no role but the table owner
    writes `archived` directly, so the cap decides, as for a new memory."""
    user = new_user(auth=auth)
    memory = remember(service, user, "Played rugby at school", "fact")
    postgres_conn.execute("update memory.memories set archived = true where id = %s", [memory.id])
    back = service.unarchive_memory(memory.id, user.key, tenant_id=user.tenant)
    assert (back.id, back.archived, back.active, back.status) == (memory.id, False, True, "active")
    with pytest.raises(NotFoundError):
        service.unarchive_memory(memory.id, user.key, tenant_id=user.tenant)  # not archived
    events = [r["event"] for r in rows_of(
        postgres_conn, "select event from memory.memory_events where memory_id = %s order by id", [memory.id])]
    assert events == ["add", "archive", "unarchive"]


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_clear_memories_and_undo(service, new_user, auth):
    user = new_user(auth=auth)
    kept = [remember(service, user, c) for c in ("Has a cat named Mingming", "Lives in Cebu City")]
    assert service.clear_memories(user.key) == 2
    assert service.get_memories(user.key) == []
    assert service.clear_memories(user.key) == 0
    restored = [service.undo_delete(m.id, user.key) for m in kept]
    assert {m.content for m in restored} == {"Has a cat named Mingming", "Lives in Cebu City"}
    assert all(m.is_active for m in restored)


def test_undo_of_a_superseded_memory_keeps_it_inactive(service, new_user):
    user = new_user()
    old = remember(service, user, "Drives a Toyota", "fact")
    service.update_memory(old.id, user.key, {"content": "Drives a Honda"})
    service.delete_memory(old.id, user.key)
    back = service.undo_delete(old.id, user.key)
    assert (back.deleted_at, back.active, back.status) == (None, False, "superseded")


# -- ownership ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("owner_auth", "caller_auth"),
    [(False, False), (True, True), (False, True), (True, False)],
    ids=["external->external", "auth->auth", "external->auth", "auth->external"],
)
def test_another_users_memory_is_not_found_and_unchanged(service, new_user, postgres_conn, owner_auth, caller_auth):
    owner = new_user(auth=owner_auth)
    caller = new_user(auth=caller_auth)
    memory = remember(service, owner, "Keeps a diary", "pattern")
    deleted = remember(service, owner, "Collects stamps", "fact")
    service.delete_memory(deleted.id, owner.key)
    archived = remember(service, owner, "Played the violin", "fact")
    postgres_conn.execute("update memory.memories set archived = true where id = %s", [archived.id])
    before = stored(postgres_conn, owner.id)
    events = (history_count(postgres_conn, memory.id), history_count(postgres_conn, deleted.id))
    attempts = [
        lambda: service.update_memory(memory.id, caller.key, {"content": "Burnt the diary"}),
        lambda: service.update_memory(memory.id, caller.key, {"type": "goal"}),
        lambda: service.update_memory(memory.id, caller.key, {"pinned": True}),
        lambda: service.pin_memory(memory.id, caller.key),
        lambda: service.delete_memory(memory.id, caller.key),
        lambda: service.undo_delete(deleted.id, caller.key),
        lambda: service.unarchive_memory(archived.id, caller.key),
        lambda: service.get_memory(memory.id, caller.key),
    ]
    for attempt in attempts:
        with pytest.raises(NotFoundError):
            attempt()
    assert stored(postgres_conn, owner.id) == before
    assert (history_count(postgres_conn, memory.id), history_count(postgres_conn, deleted.id)) == events
    assert stored(postgres_conn, caller.id) == []
    assert service.get_memories(caller.key, {"status": "all"}) == []
    assert service.get_memory(memory.id, owner.key).content == "Keeps a diary"


def test_tenants_isolate_the_same_external_id(service, new_user, postgres_conn):
    a = new_user(tenant="memory-tests-a")
    b_profile_tenant = "memory-tests-b"
    b_id = service.resolve_user(a.key, b_profile_tenant)  # the same text id in another tenant
    assert b_id != a.id
    service.ensure_primary_profile(a.key, tenant_id=b_profile_tenant)
    memory = remember(service, a, "Speaks Maori", "fact")
    with pytest.raises(NotFoundError):
        service.delete_memory(memory.id, a.key, tenant_id=b_profile_tenant)
    assert stored(postgres_conn, a.id)[0]["deleted_at"] is None
    # A memory.users id names its user only within that user's tenant.
    assert service.resolve_user(a.id, a.tenant) == a.id
    service.erase(a.key, tenant_id=b_profile_tenant)


# -- extraction requests --------------------------------------------------------------------------


def test_request_extraction_queues_each_message_once(service, new_user, client_db, postgres_conn):
    user = new_user()
    conversation = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile)
    for text in ("I'm learning Spanish", "My goal is to run 10k"):
        client_db.call("add_message", conversation_id=conversation["id"], role="user", content=text)
    assert service.request_extraction(conversation["id"]) == 2
    assert service.request_extraction(conversation["id"]) == 0  # already queued
    jobs = postgres_conn.execute(
        "select count(*) from memory_private.jobs where kind = 'extract' and payload ->> 'conversation_id' = %s",
        [str(conversation["id"])],
    ).fetchone()[0]
    assert jobs == 2
    generic = client_db.call_one("create_conversation", user_id=user.id)
    client_db.call("add_message", conversation_id=generic["id"], role="user", content="I like chess")
    assert service.request_extraction(generic["id"]) == 0  # the gate is closed: no profile


def test_request_extraction_as_an_auth_user_and_when_paused(service, new_user, client_db):
    user = new_user(auth=True)
    conversation = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile)
    client_db.call("add_message", conversation_id=conversation["id"], role="user", content="I paint on Sundays")
    service.pause(user.key)
    assert service.request_extraction(conversation["id"], user_id=user.key) == 0
    service.resume(user.key)
    assert service.request_extraction(conversation["id"], user_id=user.key) == 1


def test_extract_memories_returns_what_the_worker_drew(service, new_user, client_db, postgres_conn, database_url):
    user = new_user()
    conversation = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile)
    client_db.call_one("add_turn", conversation_id=conversation["id"],
                       user_content="I live in Lisbon and I want to learn to surf.",
                       assistant_content="Lisbon has great beaches for that.")
    client_db.call("add_message", conversation_id=conversation["id"], role="user", content="My sister is called Ana.")
    other = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile)
    client_db.call_one("add_turn", conversation_id=other["id"], user_content="I work as a nurse.", assistant_content="Thanks.")
    with running_worker(database_url, [user.id]):
        memories = service.extract_memories(conversation["id"], timeout=60)
    assert memories and all(isinstance(m, Memory) for m in memories)
    assert {m.source_conversation_id for m in memories} == {conversation["id"]}
    # Both questions were extracted, the unanswered one included: nothing of the conversation waits.
    assert client_db.call_value("extraction_pending", conversation_id=conversation["id"]) == 0
    drawn = postgres_conn.execute(
        "select count(*) from memory.memory_extractions where source_message_id in "
        "(select id from memory.messages where conversation_id = %s and role = 'user')", [conversation["id"]])
    assert drawn.fetchone()[0] == 2
    # Asked again, nothing is queued and the same memories come back at once.
    assert {m.id for m in service.extract_memories(conversation["id"], timeout=0)} == {m.id for m in memories}


def test_extract_memories_without_a_worker_says_what_waits(service, new_user, client_db, postgres_conn):
    user = new_user(auth=True)
    conversation = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile)
    client_db.call_one("add_turn", conversation_id=conversation["id"], user_content="I paint on Sundays.",
                       assistant_content="Lovely.")
    with pytest.raises(ExtractionPendingError) as raised:
        service.extract_memories(conversation["id"], user_id=user.key, timeout=0)
    assert raised.value.pending == 1 and raised.value.memories == []
    assert isinstance(raised.value, TimeoutError)
    stranger = new_user(auth=True)
    with pytest.raises(NotFoundError):
        service.extract_memories(conversation["id"], user_id=stranger.key, timeout=0)
    with pytest.raises(NotFoundError):
        service.extract_memories(uuid4(), timeout=0)
    # Users served as the service role: another's conversation reads as missing too, and an id
    # nobody has is not made a user by asking.
    outsider = new_user()
    with pytest.raises(NotFoundError):
        service.extract_memories(conversation["id"], user_id=outsider.key, timeout=0)
    nobody = f"mem-{uuid4().hex[:12]}"
    with pytest.raises(NotFoundError):
        service.extract_memories(conversation["id"], user_id=nobody, timeout=0)
    assert users_with_external_id(postgres_conn, nobody) == 0


# -- selection and the prompt block ---------------------------------------------------------------


def test_get_context_memories_pinned_first_and_recorded(service, new_user, postgres_conn):
    user = new_user()
    plain = remember(service, user, "Likes green tea", "emotion", confidence=0.3)
    goal = remember(service, user, "Wants to learn to sail", "goal", confidence=0.9)
    pinned = remember(service, user, "Is vegetarian", "fact", confidence=0.2, pinned=True)
    preview = service.get_context_memories(user.key)
    assert all(isinstance(m, SelectedMemory) for m in preview)
    assert [m.id for m in preview] == [pinned.id, goal.id, plain.id]
    assert [m.tokens for m in preview] == [-(-len(m.content) // 4) + 2 for m in preview]
    assert {r["reference_count"] for r in stored(postgres_conn, user.id)} == {0}  # choosing records nothing
    chosen = service.get_context_memories(user.key, user.profile, limit=2, record=True)
    assert [m.id for m in chosen] == [pinned.id, goal.id]
    counts = {r["id"]: r["reference_count"] for r in stored(postgres_conn, user.id)}
    assert counts == {pinned.id: 1, goal.id: 1, plain.id: 0}
    assert [m.id for m in service.get_context_memories(user.key, query="sailing boats")][0] == pinned.id
    assert service.get_context_memories(user.key, token_budget=3) == []  # the first one costs more


def test_get_context_memories_marks_the_answer(service, new_user, client_db, postgres_conn):
    user = new_user()
    memory = remember(service, user, "Is a night owl", "pattern")
    conversation = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile)
    turn = client_db.call_one(
        "add_turn", conversation_id=conversation["id"], user_content="hi", assistant_content="hello"
    )
    chosen = service.get_context_memories(user.key, message_id=turn["assistant_message_id"])
    assert [m.id for m in chosen] == [memory.id]
    used = postgres_conn.execute("select used_memory_ids from memory.messages where id = %s",
                             [turn["assistant_message_id"]]).fetchone()[0]
    assert used == [memory.id]
    # Marking the same answer again does not count the use twice.
    service.mark_memories_used(user.key, turn["assistant_message_id"], [memory.id])
    assert stored(postgres_conn, user.id)[0]["reference_count"] == 1


def test_storing_the_answer_counts_the_memories_it_used(service, new_user, client_db, postgres_conn, closed_port_url):
    """Choosing memories reads; storing the answer with `used_memory_ids` counts each use once,
    through the session manager, the conversation store, and a write-back after an outage."""
    user = new_user()
    tea = remember(service, user, "Likes green tea", "preference")
    sail = remember(service, user, "Wants to learn to sail", "goal")
    chosen = service.get_context_memories(user.key, query="what should I drink")

    def counts() -> dict[UUID, int]:
        return {r["id"]: r["reference_count"] for r in stored(postgres_conn, user.id)}

    assert {m.id for m in chosen} == {tea.id, sail.id} and counts() == {tea.id: 0, sail.id: 0}
    sessions = ConversationMemoryManager(client_db)
    turn = sessions.store_turn(None, user.key, "What should I drink?", "Green tea.",
                               used_memory_ids=[m.id for m in chosen])
    assert counts() == {tea.id: 1, sail.id: 1}
    used = postgres_conn.execute(
        "select used_memory_ids from memory.messages where conversation_id = %s and role = 'assistant'",
        [turn.session_id],
    ).fetchone()[0]
    assert used == [m.id for m in chosen]
    assert ConversationStore(client_db).store_turn(user.key, "A hobby?", "Sailing.", used_memory_ids=[str(sail.id)])
    assert counts() == {tea.id: 1, sail.id: 2}

    buffer = FallbackBuffer()
    down = Database(closed_port_url, connect_timeout=0.3, timeout=0.3, retry_interval=600)
    try:
        offline = ConversationMemoryManager(down, fallback=buffer)
        assert offline.store_turn(turn.session_id, user.key, "More tea?", "Yes.", used_memory_ids=[tea.id]).buffered
    finally:
        down.close()
    assert counts() == {tea.id: 1, sail.id: 2}  # not yet: the answer is not stored
    assert ConversationMemoryManager(client_db, fallback=buffer).flush_pending() == 1
    assert counts() == {tea.id: 2, sail.id: 2}

    with pytest.raises(InvalidInputError):
        sessions.store_turn(turn.session_id, user.key, "q", "a", used_memory_ids=["not a memory id"])
    assert ConversationStore(client_db).store_turn(user.key, "q", "a", used_memory_ids=str(tea.id)) is False
    assert counts() == {tea.id: 2, sail.id: 2}


def test_system_prompt_block_text():
    def m(content: str, pinned: bool = False) -> SimpleNamespace:
        return SimpleNamespace(content=content, pinned=pinned)

    assert MemoryService.system_prompt_block([]) == ""
    block = MemoryService.system_prompt_block([m("Likes tea"), m("Is vegetarian", True), m("Lives in Oslo")])
    assert block == (
        "\n\n## What You Know About the User\n"
        "- Is vegetarian\n"
        "- Likes tea\n"
        "- Lives in Oslo\n"
    )
    many = [m(f"recent {i}") for i in range(12)] + [m("pinned a", True), m("pinned b", True)]
    assert MemoryService.system_prompt_block(many) == (
        "\n\n## What You Know About the User\n- pinned a\n- pinned b\n"
        + "".join(f"- recent {i}\n" for i in range(10))
    )
    seed_named = SimpleNamespace(content="Seed 002 model", is_pinned=True)
    assert MemoryService.system_prompt_block([m("x"), seed_named]).startswith(
        "\n\n## What You Know About the User\n- Seed 002 model\n")


def test_system_prompt_block_from_selected_memories(service, new_user):
    user = new_user()
    remember(service, user, "Plays the violin", "fact", confidence=0.5)
    remember(service, user, "Is afraid of flying", "fact", pinned=True, confidence=0.1)
    block = service.system_prompt_block(service.get_context_memories(user.key, record=False))
    assert block == "\n\n## What You Know About the User\n- Is afraid of flying\n- Plays the violin\n"


# -- settings -------------------------------------------------------------------------------------


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_pause_resume_and_opt_in(service, new_user, postgres_conn, auth):
    user = new_user(auth=auth)

    def settings() -> tuple[bool, bool]:
        return postgres_conn.execute(
            "select memory_paused, long_term_opt_in from memory.users where id = %s", [user.id]
        ).fetchone()

    paused = service.pause(user.key)
    assert (paused.user_id, paused.memory_paused, paused.long_term_opt_in) == (user.id, True, False)
    assert settings() == (True, False)
    assert service.opt_in_long_term(user.key).long_term_opt_in is True
    assert settings() == (True, True)
    assert service.resume(user.key).memory_paused is False
    assert service.opt_in_long_term(user.key, False).long_term_opt_in is False
    assert settings() == (False, False)


# -- export, erase, import ------------------------------------------------------------------------

#: Fields memory.import_memories does not bring back as they were: the owner may be a new user
#: row (an external id maps to a fresh user after erasure); links to conversations and messages
#: that no longer exist are dropped (documented in the function); the row trigger
#: memory_private.memory_defaults stamps updated_at with the import time (not documented).
DROPPED = {"user_id", "source_conversation_id", "source_message_id", "updated_at"}


def build_history(service: MemoryService, user: SimpleNamespace, client_db, postgres_conn) -> None:
    """One memory in every state a user can have."""
    conversation = client_db.call_one("create_conversation", user_id=user.id, profile_id=user.profile, mode="astro")
    message = client_db.call_one("add_message", conversation_id=conversation["id"], role="user", content="I sing")
    remember(service, user, "Sings in a choir", "pattern", category="music", source_message_id=message["id"],
             context={"transits": ["moon"], "n": 1})
    remember(service, user, "Is vegetarian", "fact", pinned=True, confidence=0.95)
    old = remember(service, user, "Lives in Wellington", "fact")
    service.update_memory(old.id, user.key, {"content": "Lives in Christchurch"}, tenant_id=user.tenant)
    gone = remember(service, user, "Smokes", "pattern")
    service.delete_memory(gone.id, user.key, tenant_id=user.tenant)
    # A text a spreadsheet would take for a formula, over two lines (CSV keeps both as written).
    archived = remember(service, user, '=Played rugby\r\nat school, "the Lions"', "fact")
    postgres_conn.execute("update memory.memories set archived = true where id = %s", [archived.id])
    used = remember(service, user, "Wants to visit Japan", "goal", expires_at=datetime.now(UTC) + timedelta(days=400))
    service.get_context_memories(user.key, record=True, tenant_id=user.tenant)  # references the live ones
    assert used.id in {r["id"] for r in stored(postgres_conn, user.id) if r["reference_count"] == 1}


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in DROPPED} for r in rows]


@pytest.mark.parametrize("auth", [False, True], ids=["external-id", "auth-user"])
def test_export_erase_import_restores_every_record(service, new_user, client_db, postgres_conn, auth):
    user = new_user(auth=auth)
    build_history(service, user, client_db, postgres_conn)
    before = stored(postgres_conn, user.id)
    profiles_before = rows_of(postgres_conn, "select id, name, is_primary, timezone, attributes, created_at"
                              " from memory.profiles where user_id = %s order by id", [user.id])
    export = service.export(user.key)
    assert (export["format"], export["version"], export["user_id"]) == ("supamem.memories", 1, str(user.id))
    assert len(export["memories"]) == len(before) == 7
    assert set(export["memories"][0]) == set(MEMORY_COLUMNS)  # every field, not `search`
    json.dumps(export)  # plain JSON

    result = service.erase(user.key)
    assert (result["user_id"], result["memories"], result["conversations"]) == (str(user.id), 7, 1)
    assert stored(postgres_conn, user.id) == []

    assert service.import_(user.key, export) == 7
    restored_user = service.resolve_user(user.key)
    assert (restored_user == user.id) is auth  # an Auth user comes back as themselves
    after = stored(postgres_conn, restored_user)
    assert comparable(after) == comparable(before)
    assert {r["user_id"] for r in after} == {restored_user}
    assert all(r["source_conversation_id"] is None and r["source_message_id"] is None for r in after)
    profiles_after = rows_of(postgres_conn, "select id, name, is_primary, timezone, attributes, created_at"
                             " from memory.profiles where user_id = %s order by id", [restored_user])
    assert profiles_after == profiles_before
    assert service.import_(user.key, export) == 0  # a second import adds nothing
    assert stored(postgres_conn, restored_user) == after


def test_import_rejects_what_is_not_an_export(service, new_user):
    user = new_user()
    with pytest.raises(InvalidInputError, match="not a supamem memories export"):
        service.import_(user.key, {"memories": []})
    with pytest.raises(InvalidInputError):
        service.import_(user.key, [])  # type: ignore[arg-type]


def test_erase_of_an_unknown_user_id_is_not_found(service, client_db):
    with pytest.raises(NotFoundError):
        client_db.call("erase_user", user_id=uuid4())


def test_reads_of_an_unknown_user_create_nothing(service, make_id, postgres_conn):
    user = make_id("reader")
    assert service.get_memories(user) == []
    assert service.get_context_memories(user, query="anything") == []
    with pytest.raises(NotFoundError, match="memory not found"):
        service.get_memory(uuid4(), user)
    for call in (service.export, service.erase):
        with pytest.raises(NotFoundError, match="user not found"):
            call(user)
    assert users_with_external_id(postgres_conn, user) == 0


# -- command line ---------------------------------------------------------------------------------


def test_cli_help_is_there_for_a_new_user(database_url):
    for command in ("export", "import", "erase"):
        done = run_cli(database_url, command, "--help")
        assert done.returncode == 0, done.stderr
        assert "--user ID" in done.stdout and "--tenant T" in done.stdout and "example" in done.stdout


def test_cli_json_round_trip(service, new_user, client_db, postgres_conn, database_url, tmp_path):
    tenant = 41
    user = new_user(tenant=tenant)
    build_history(service, user, client_db, postgres_conn)
    before = stored(postgres_conn, user.id)
    archive = tmp_path / "memories.json"
    done = run_cli(database_url, "export", "--user", user.key, "--tenant", str(tenant), "-o", str(archive))
    assert done.returncode == 0, done.stderr
    assert "exported 7 memories" in done.stderr
    document = json.loads(archive.read_text())
    assert {m["id"] for m in document["memories"]} == {str(r["id"]) for r in before}

    refused = run_cli(database_url, "erase", "--user", user.key, "--tenant", str(tenant))
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert len(stored(postgres_conn, user.id)) == 7  # nothing happened

    erased = run_cli(database_url, "erase", "--user", user.key, "--tenant", str(tenant), "--yes")
    assert erased.returncode == 0, erased.stderr
    assert json.loads(erased.stdout)["memories"] == 7
    assert stored(postgres_conn, user.id) == []

    imported = run_cli(database_url, "import", "--user", user.key, "--tenant", str(tenant), str(archive))
    assert imported.returncode == 0, imported.stderr
    assert "imported 7 of 7" in imported.stdout
    service.identity.forget()
    service._owners.clear()  # noqa: SLF001 - the CLI erased the user behind this service's back
    new_id = service.resolve_user(user.key, tenant)
    assert comparable(stored(postgres_conn, new_id)) == comparable(before)
    again = run_cli(database_url, "import", "--user", user.key, "--tenant", str(tenant), str(archive))
    assert again.returncode == 0 and "imported 0 of 7" in again.stdout
    # --database-url wins over $DATABASE_URL (here a closed port).
    explicit = run_cli(
        "postgresql://postgres:postgres@127.0.0.1:1/postgres",
        "export", "--user", user.key, "--tenant", str(tenant), "--database-url", database_url,
    )
    assert explicit.returncode == 0, explicit.stderr


def test_cli_csv_round_trip(service, new_user, client_db, postgres_conn, database_url, tmp_path):
    user = new_user()
    build_history(service, user, client_db, postgres_conn)
    before = stored(postgres_conn, user.id)
    archive = tmp_path / "memories.csv"
    done = run_cli(database_url, "export", "--user", user.key, "--format", "csv", "-o", str(archive))
    assert done.returncode == 0, done.stderr
    with archive.open(encoding="utf-8", newline="") as written:
        reader = csv.DictReader(written)
        assert reader.fieldnames == list(MEMORY_COLUMNS)
        rows = list(reader)
    by_id = {r["id"]: r for r in rows}
    # The formula is written behind an apostrophe; every other text as it is.
    assert {i: r["content"] for i, r in by_id.items()} == {
        str(r["id"]): "'" * r["content"].startswith("=") + r["content"] for r in before}
    sung = next(r for r in before if r["content"] == "Sings in a choir")
    assert json.loads(by_id[str(sung["id"])]["context"]) == {"transits": ["moon"], "n": 1}  # json as JSON text
    assert by_id[str(sung["id"])]["pinned"] == "false" and by_id[str(sung["id"])]["category"] == "music"
    superseded = next(r for r in before if r["superseded_by"] is not None)
    assert by_id[str(superseded["id"])]["superseded_by"] == str(superseded["superseded_by"])

    assert run_cli(database_url, "erase", "--user", user.key, "--yes").returncode == 0
    imported = run_cli(database_url, "import", "--user", user.key, str(archive))
    assert imported.returncode == 0, imported.stderr
    assert "imported 7 of 7" in imported.stdout
    service.identity.forget()
    service._owners.clear()  # noqa: SLF001
    new_id = service.resolve_user(user.key)
    assert comparable(stored(postgres_conn, new_id)) == comparable(before)
    (profile,) = rows_of(postgres_conn, "select id, name, is_primary from memory.profiles where user_id = %s", [new_id])
    assert (profile["id"], profile["name"], profile["is_primary"]) == (user.profile, "Imported profile", True)
    assert run_cli(database_url, "import", "--user", user.key, str(archive)).stdout.startswith("imported 0 of 7")


def test_cli_reports_errors_in_one_line(database_url, postgres_conn, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    key = f"cli-{uuid4().hex[:8]}"
    try:
        done = run_cli(database_url, "import", "--user", key, str(bad))
        assert done.returncode == 2  # bad input
        assert "not a supamem memories export" in done.stderr and "Traceback" not in done.stderr
    finally:  # resolving the id created the user before the import was refused
        postgres_conn.execute("delete from memory.users where external_id = %s and tenant_id is null", [key])
