"""Every summary_interval turns a turn notes its conversation's summary
(memory_private.pending_summaries); the notes become summarize_conversation jobs when a worker
claims summaries, when pg_cron's minutely pass runs, or when
`memory_private.queue_pending_summaries` is called. Against a real database, with pg_cron's pass
paused so each test decides when notes become jobs:

- A pass skips the notes another transaction holds instead of waiting for them, and a later pass
  queues them: nothing is lost and nothing is queued twice. A claim for some users waits for
  theirs instead, and finds the jobs the holder made.
- A user erased while a pass runs does not fail it: the erased user's note goes, the other
  user's job is queued.
- The minutely pass drains a backlog larger than one batch.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from client_helpers import wait_for, waiting_on
from job_helpers import JobKit


@pytest.fixture
def summaries_kit(database_url: str, summary_queue_paused: None) -> Iterator[JobKit]:
    job_kit = JobKit(database_url, f"summary-notes-{uuid.uuid4().hex[:8]}")
    try:
        yield job_kit
    finally:
        job_kit.cleanup()


def _conversation_with_summary(kit: JobKit, user: uuid.UUID, profile: uuid.UUID) -> uuid.UUID:
    """A conversation of summary_interval (4) turns: one note."""
    conversation = kit.value("select (memory.create_conversation(p_user_id => %s, p_profile_id => %s)).id",
                             [user, profile])
    for n in range(4):
        kit.conn.execute("select memory.add_turn(%s, %s, 'Noted.')", [conversation, f"Fact {n}"])
    return conversation


def _noted(kit: JobKit, conversations: list[uuid.UUID]) -> list[uuid.UUID]:
    return [r["conversation_id"] for r in kit.rows(
        "select conversation_id from memory_private.pending_summaries where conversation_id = any(%s)"
        " order by 1", [conversations])]


def _summarised(kit: JobKit, conversations: list[uuid.UUID]) -> list[str]:
    return sorted(r["c"] for r in kit.rows(
        "select payload ->> 'conversation_id' as c from memory_private.jobs"
        " where kind = 'summarize_conversation' and payload ->> 'conversation_id' = any(%s)",
        [[str(c) for c in conversations]]))


def test_a_pass_skips_held_notes_and_a_later_pass_queues_them(summaries_kit: JobKit, database_url: str) -> None:
    user, profile = summaries_kit.user()
    first, second = (_conversation_with_summary(summaries_kit, user, profile) for _ in range(2))
    assert _noted(summaries_kit, [first, second]) == sorted([first, second])
    with psycopg.connect(database_url) as holder, psycopg.connect(database_url, autocommit=True) as passer:
        holder.execute("select 1 from memory_private.pending_summaries where conversation_id = %s for update", [first])
        # A pass that waited for the held note would fail here instead of returning.
        passer.execute("set lock_timeout = '2s'")
        passer.execute("select memory_private.queue_pending_summaries(null)")
        assert _noted(summaries_kit, [first, second]) == [first]
        assert _summarised(summaries_kit, [first, second]) == [str(second)]
        holder.rollback()
        passer.execute("select memory_private.queue_pending_summaries(null)")
    assert _noted(summaries_kit, [first, second]) == []
    assert _summarised(summaries_kit, [first, second]) == sorted([str(first), str(second)])


def test_a_claim_for_some_users_waits_for_their_notes_a_pass_holds(summaries_kit: JobKit, database_url: str) -> None:
    """A claim for some users waits for their notes another pass holds, then finds the job that
    pass made (skipped, a `--once` worker found neither)."""
    user, profile = summaries_kit.user()
    conversation = _conversation_with_summary(summaries_kit, user, profile)
    with psycopg.connect(database_url) as holder, psycopg.connect(database_url, autocommit=True) as claimer:
        holder.execute("select 1 from memory_private.pending_summaries where conversation_id = %s for update",
                       [conversation])
        claimer_pid = claimer.info.backend_pid
        with ThreadPoolExecutor(max_workers=1) as pool:
            claimed = pool.submit(lambda: claimer.execute(
                "select payload ->> 'conversation_id' from memory.claim_jobs(array['summarize_conversation'], 'held', 5,"
                " null, %s)", [[user]]).fetchall())
            wait_for(lambda: waiting_on(summaries_kit.conn, claimer_pid, "Lock"), what="the claim to wait for the note")
            # The holder is a pass: it makes the note's job, then commits.
            holder.execute("select memory_private.queue_pending_summaries()")
            holder.commit()
            assert claimed.result(timeout=30) == [(str(conversation),)]


def test_a_user_erased_during_a_pass_does_not_fail_it(summaries_kit: JobKit, database_url: str) -> None:
    erased, erased_profile = summaries_kit.user()
    kept, kept_profile = summaries_kit.user()
    gone = _conversation_with_summary(summaries_kit, erased, erased_profile)
    stays = _conversation_with_summary(summaries_kit, kept, kept_profile)
    with psycopg.connect(database_url) as eraser, psycopg.connect(database_url, autocommit=True) as passer:
        eraser.execute("select memory.erase_user(%s)", [erased])
        passer_pid = passer.info.backend_pid
        with ThreadPoolExecutor(max_workers=1) as pool:
            # The pass reads the erased user's conversation (the erase is not committed yet) and
            # its job's foreign key waits for the erase; once that commits, the key fails and the
            # pass takes its batch again, without the erased user's note.
            taken = pool.submit(lambda: passer.execute(
                "select memory_private.queue_pending_summaries(null, %s)", [[erased, kept]]).fetchone()[0])
            wait_for(lambda: waiting_on(summaries_kit.conn, passer_pid, "Lock"),
                     what="the pass to wait for the erase")
            eraser.commit()
            summaries_kit.users.remove(erased)
            assert taken.result(timeout=30) == 1
    assert _summarised(summaries_kit, [gone, stays]) == [str(stays)]
    # The erased user's note names a conversation no user holds: the unscoped pass drops it.
    assert _noted(summaries_kit, [gone, stays]) == [gone]
    summaries_kit.conn.execute("select memory_private.queue_pending_summaries(null)")
    assert _noted(summaries_kit, [gone]) == []
    assert _summarised(summaries_kit, [gone]) == []


def test_the_minutely_pass_drains_a_backlog_larger_than_a_batch(summaries_kit: JobKit) -> None:
    user, profile = summaries_kit.user()
    conversation = _conversation_with_summary(summaries_kit, user, profile)
    # A backlog of notes whose conversations are gone around the one real note: 2,500 notes, three
    # batches.
    summaries_kit.conn.execute(
        "insert into memory_private.pending_summaries (conversation_id, to_turn, turns)"
        " select gen_random_uuid(), 4, 4 from generate_series(1, 2499)")
    summaries_kit.conn.execute("call memory_private.run_note_queue('summarize_conversation')")
    assert summaries_kit.value("select count(*) from memory_private.pending_summaries") == 0
    assert _summarised(summaries_kit, [conversation]) == [str(conversation)]


@pytest.mark.parametrize("kind", ["title", "embed", None])
def test_the_pass_names_the_kinds_of_note_it_knows(summaries_kit: JobKit, kind: str | None) -> None:
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="no notes of kind"):
        summaries_kit.conn.execute("call memory_private.run_note_queue(%s)", [kind])
    summaries_kit.conn.rollback()
