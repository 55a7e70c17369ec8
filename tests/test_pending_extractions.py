"""A finished turn notes its question (memory_private.pending_extractions); the notes become
extract jobs when a worker claims extractions, when pg_cron's minutely pass runs, or when
`memory_private.queue_pending_extractions` is called. Against a real database, with pg_cron's pass
paused so each test decides when notes become jobs:

- A pass skips the notes another transaction holds instead of waiting for them, and a later pass
  queues them: nothing is lost and nothing is queued twice.
- A claim for some users' work converts their notes, whatever backlog of others' waits, and waits
  for those another pass holds, so it finds the jobs that pass made.
- A user erased while a pass runs does not fail it: the erased user's note goes, the other
  user's job is queued.
- Whatever the order of turns, pauses and passes, a question gets exactly one extract job when the
  gate was open for its author at its turn, and none otherwise (the turn's answer stands: a pause
  after it is for the extraction to honour when it is applied), and no note outlives the last pass.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from client_helpers import wait_for, waiting_on
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from job_helpers import JobKit

PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

QUEUE = "select memory_private.queue_pending_extractions()"


@pytest.fixture
def notes_kit(database_url: str, extraction_queue_paused: None) -> Iterator[JobKit]:
    job_kit = JobKit(database_url, f"notes-{uuid.uuid4().hex[:8]}")
    try:
        yield job_kit
    finally:
        job_kit.cleanup()


def _questions(kit: JobKit, conversation: uuid.UUID) -> list[int]:
    return [r["id"] for r in kit.rows(
        "select id from memory.messages where conversation_id = %s and role = 'user' order by id", [conversation])]


def _extract_sources(kit: JobKit, user: uuid.UUID) -> list[int]:
    return [int(r["source"]) for r in kit.rows(
        "select payload ->> 'source_message_id' as source from memory_private.jobs"
        " where kind = 'extract' and user_id = %s order by id", [user])]


def _noted(kit: JobKit, ids: list[int]) -> list[int]:
    return [r["message_id"] for r in kit.rows(
        "select message_id from memory_private.pending_extractions where message_id = any(%s) order by 1", [ids])]


def test_a_pass_skips_held_notes_and_a_later_pass_queues_them(notes_kit: JobKit, database_url: str) -> None:
    user, profile = notes_kit.user()
    conversation = notes_kit.conversation(user, profile, [])
    for n in range(3):
        notes_kit.conn.execute("select memory.add_turn(%s, %s, 'Busy bees.')", [conversation, f"I keep {n} hives"])
    questions = _questions(notes_kit, conversation)
    assert _noted(notes_kit, questions) == questions
    with psycopg.connect(database_url) as holder, psycopg.connect(database_url, autocommit=True) as passer:
        holder.execute("select 1 from memory_private.pending_extractions where message_id = %s for update",
                       [questions[0]])
        # A pass that waited for the held note would fail here instead of returning.
        passer.execute("set lock_timeout = '2s'")
        assert passer.execute(QUEUE).fetchone() == (2,)
        assert _noted(notes_kit, questions) == [questions[0]]
        assert sorted(_extract_sources(notes_kit, user)) == questions[1:]
        holder.rollback()
        assert passer.execute(QUEUE).fetchone() == (1,)
    assert _noted(notes_kit, questions) == []
    assert sorted(_extract_sources(notes_kit, user)) == questions


def test_a_claim_for_some_users_converts_their_notes_behind_a_backlog(notes_kit: JobKit) -> None:
    """A worker that serves some users (a tenant's, the demo's) finds their extractions however many
    other users' notes wait before theirs (it took the first 1,000 notes of anyone, so behind a
    backlog it found none of its users' until the minutely pass reached them), and leaves the
    others' notes to the passes that serve everyone."""
    user, profile = notes_kit.user()
    conversation = notes_kit.conversation(user, profile, [])
    notes_kit.conn.execute("select memory.add_turn(%s, 'I keep bees', 'Busy bees.')", [conversation])
    (question,) = _questions(notes_kit, conversation)
    # Another user's notes, older and first in every order (their messages are gone: a pass that
    # took them would just drop them).
    notes_kit.conn.execute(
        "insert into memory_private.pending_extractions (user_id, message_id, noted_at)"
        " select '00000000-0000-4000-8000-000000000000', -i, now() - interval '1 hour' from generate_series(1, 1500) as i")
    try:
        claimed = notes_kit.rows("select * from memory.claim_jobs(array['extract'], 'backlog', 5, null, %s)", [[user]])
        assert [int(c["payload"]["source_message_id"]) for c in claimed] == [question]
        assert notes_kit.value("select count(*) from memory_private.pending_extractions where message_id < 0") == 1500
    finally:
        notes_kit.conn.execute("delete from memory_private.pending_extractions where message_id < 0")


def test_a_claim_for_some_users_waits_for_their_notes_a_pass_holds(notes_kit: JobKit, database_url: str) -> None:
    """The passes that serve everyone skip held notes, but a claim for some users waits for theirs:
    another pass holds them only while it makes their jobs, and skipped, a `--once` worker (the
    demo's) found neither notes nor jobs and stopped with its users' extractions undone."""
    user, profile = notes_kit.user()
    conversation = notes_kit.conversation(user, profile, [])
    (question,) = [notes_kit.value("select user_message_id from memory.add_turn(%s, 'I keep bees', 'Sweet.')",
                                   [conversation])]
    with psycopg.connect(database_url) as holder, psycopg.connect(database_url, autocommit=True) as claimer:
        holder.execute("select 1 from memory_private.pending_extractions where message_id = %s for update", [question])
        claimer_pid = claimer.info.backend_pid
        with ThreadPoolExecutor(max_workers=1) as pool:
            claimed = pool.submit(lambda: claimer.execute(
                "select payload ->> 'source_message_id' from memory.claim_jobs(array['extract'], 'held', 5, null, %s)",
                [[user]]).fetchall())
            wait_for(lambda: waiting_on(notes_kit.conn, claimer_pid, "Lock"), what="the claim to wait for the note")
            # The holder is a pass: it makes the note's job, then commits.
            assert holder.execute(QUEUE).fetchone() == (1,)
            holder.commit()
            assert claimed.result(timeout=30) == [(str(question),)]


STEPS = st.lists(st.sampled_from(["turn", "pause", "resume", "queue"]), min_size=1, max_size=12)


@PROPERTY
@given(steps=STEPS)
def test_property_a_question_is_queued_once_when_the_gate_was_open_at_its_turn(
    notes_kit: JobKit, steps: list[str]
) -> None:
    user, profile = notes_kit.user()
    conversation = notes_kit.conversation(user, profile, [])
    paused = False
    written: list[int] = []
    noted: list[int] = []
    expected: list[int] = []
    for n, step in enumerate([*steps, "queue"]):
        if step == "turn":
            question = notes_kit.value(
                "select user_message_id from memory.add_turn(%s, %s, 'Noted.')", [conversation, f"Fact {n}"])
            written.append(question)
            if not paused:
                noted.append(question)
        elif step in ("pause", "resume"):
            paused = step == "pause"
            notes_kit.conn.execute("update memory.users set memory_paused = %s where id = %s", [paused, user])
        else:
            notes_kit.conn.execute(QUEUE)
            expected.extend(noted)
            noted.clear()
    assert _extract_sources(notes_kit, user) == expected
    assert _noted(notes_kit, written) == []


def test_the_minutely_pass_drains_a_backlog_larger_than_a_batch(notes_kit: JobKit) -> None:
    user, profile = notes_kit.user()
    conversation = notes_kit.conversation(user, profile, [])
    question = notes_kit.value("select user_message_id from memory.add_turn(%s, 'I keep bees', 'Sweet.')",
                               [conversation])
    # A backlog of notes whose messages are gone (a window trimmed them, or their user was erased)
    # around the one real note: 2,500 notes, three batches.
    gone = notes_kit.value("select max(id) + 1000000 from memory.messages")
    notes_kit.conn.execute(
        "insert into memory_private.pending_extractions (user_id, message_id)"
        " select %s, %s + i from generate_series(0, 2498) as i", [user, gone])
    notes_kit.conn.execute("call memory_private.run_note_queue('extract')")
    assert _noted(notes_kit, [question, *range(gone, gone + 2499)]) == []
    assert _extract_sources(notes_kit, user) == [question]


def test_a_user_erased_during_a_pass_does_not_fail_it(notes_kit: JobKit, database_url: str) -> None:
    erased, erased_profile = notes_kit.user()
    kept, kept_profile = notes_kit.user()
    conversations = [notes_kit.conversation(user, profile, [])
                     for user, profile in ((erased, erased_profile), (kept, kept_profile))]
    questions = [notes_kit.value("select user_message_id from memory.add_turn(%s, 'I keep bees', 'Sweet.')", [c])
                 for c in conversations]
    with psycopg.connect(database_url) as eraser, psycopg.connect(database_url, autocommit=True) as passer:
        eraser.execute("select memory.erase_user(%s)", [erased])
        passer_pid = passer.info.backend_pid
        with ThreadPoolExecutor(max_workers=1) as pool:
            # The pass reads the erased user's question (the erase is not committed yet) and its
            # job's foreign key waits for the erase; once that commits, the key fails and the pass
            # takes its batch again, without the erased user's note.
            taken = pool.submit(lambda: passer.execute("select memory_private.queue_pending_extractions(null)"))
            wait_for(lambda: waiting_on(notes_kit.conn, passer_pid, "Lock"), what="the pass to wait for the erase")
            eraser.commit()
            notes_kit.users.remove(erased)
            taken.result(timeout=30)
    assert _extract_sources(notes_kit, kept) == [questions[1]]
    assert _noted(notes_kit, questions) == []
