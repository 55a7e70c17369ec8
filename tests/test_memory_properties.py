"""Properties of long-term memory, each a hypothesis test on the real database.

(a) Selection (memory.select_memories): pinned first, then by seed 004's score, at most the
    limit, within the token budget, never a memory that is not live, and nothing left out that
    would have fit before the first one that did not; (a') the same through the profile's kept
    candidates (memory_private.memory_selections), built or not, after writes and as time passes.
(b) Dedup (memory.remember): no two live memories of one user and profile are near-duplicates,
    and every 'duplicate' outcome is exactly one reference more.
(c) Supersede (revise / forget / restore): a chain of versions has at most one active memory,
    its head, and a superseded memory is never active; the rows match a model of the calls, and
    are numbered in the order written.

Every example uses a fresh user (memory.user_id_for with a uuid4 external id) and erases it at
the end, so the database does not grow with the number of examples.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from decimal import Decimal, localcontext
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from supamem.db import Database
from supamem.errors import NotFoundError, SupamemError
from supamem.memories import MemoryService

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Scores are compared with this slack: Python's Decimal and Postgres' numeric round the
#: recency division at different digits (both far below this).
EPSILON = Decimal("1e-9")


@pytest.fixture(scope="module")
def weights(postgres_conn: psycopg.Connection) -> dict[str, Decimal]:
    """memory.memory_types: the selection weight of each type."""
    return dict(postgres_conn.execute("select type, weight from memory.memory_types order by type").fetchall())


@contextmanager
def fresh_user(db: Database, postgres_conn: psycopg.Connection) -> Iterator[tuple[UUID, UUID]]:
    """A new external-id user with a primary profile; erased (with all of it) afterwards."""
    user = db.call_value("user_id_for", external_id=f"prop-{uuid4()}")
    profile = postgres_conn.execute(
        "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", [user]
    ).fetchone()[0]
    try:
        yield user, profile
    finally:
        db.call("erase_user", user_id=user)


# -- (a) selection ------------------------------------------------------------------------------

#: Where a generated memory lives. Only 'live' and 'expiring' (expires tomorrow) may be selected.
STATES = ["live", "live", "live", "expiring", "archived", "deleted", "superseded", "expired", "other_profile"]
LIVE_STATES = {"live", "expiring"}
DAY_SECONDS = 86_400

generated_memory = st.fixed_dictionaries(
    {
        "type": st.integers(0, 1_000),  # an index into memory.memory_types
        "confidence": st.integers(0, 1_000),  # thousandths (numeric(4, 3))
        "pinned": st.booleans(),
        "reference_count": st.integers(0, 40),
        # Seconds since the last reference (None: never referenced) and since creation; past
        # 30 days recency stops falling, so ages go beyond that.
        "referenced_ago": st.one_of(st.none(), st.integers(0, 60 * DAY_SECONDS)),
        "created_ago": st.integers(0, 90 * DAY_SECONDS),
        "length": st.integers(1, 300),
        "state": st.sampled_from(STATES),
    }
)


def filler(i: int, length: int) -> str:
    text = f"m{i} " + "remembered words " * (length // 17 + 1)
    return text[: max(length, len(f"m{i}"))].rstrip() or f"m{i}"


def insert_memories(
    postgres_conn: psycopg.Connection, user: UUID, profile: UUID, other_profile: UUID, specs: list[dict[str, Any]],
    type_names: list[str],
) -> list[dict[str, Any]]:
    """Insert the generated memories as postgres (counters and timestamps set directly)."""
    anchor = postgres_conn.execute(
        "insert into memory.memories (user_id, profile_id, content, type) values (%s, %s, 'anchor', 'fact')"
        " returning id",
        [user, other_profile],
    ).fetchone()[0]
    rows = []
    for i, spec in enumerate(specs):
        state = spec["state"]
        cur = postgres_conn.execute(
            """insert into memory.memories (
                user_id, profile_id, content, type, confidence, pinned, reference_count, last_referenced_at,
                created_at, archived, active, deleted_at, superseded_by, expires_at
            ) values (
                %(user)s, %(profile)s, %(content)s, %(type)s, %(confidence)s, %(pinned)s, %(refs)s,
                now() - make_interval(secs => %(ref_ago)s), now() - make_interval(secs => %(created_ago)s),
                %(archived)s, %(active)s, case when %(deleted)s then now() - interval '1 day' end,
                %(superseded_by)s,
                case %(state)s when 'expired' then now() - interval '1 minute'
                               when 'expiring' then now() + interval '1 day' end
            ) returning id, content, type, confidence, pinned, reference_count, last_referenced_at, created_at""",
            {
                "user": user,
                "profile": other_profile if state == "other_profile" else profile,
                "content": filler(i, spec["length"]),
                "type": type_names[spec["type"] % len(type_names)],
                "confidence": Decimal(spec["confidence"]) / 1000,
                "pinned": spec["pinned"],
                "refs": spec["reference_count"],
                "ref_ago": spec["referenced_ago"],
                "created_ago": spec["created_ago"],
                "archived": state == "archived",
                "active": state not in {"deleted", "superseded"},
                "deleted": state == "deleted",
                "superseded_by": anchor if state == "superseded" else None,
                "state": state,
            },
        )
        names = [d.name for d in cur.description or []]
        row = dict(zip(names, cur.fetchone(), strict=True))
        row["live"] = state in LIVE_STATES
        rows.append(row)
    return rows


def expected_score(row: dict[str, Any], weights: dict[str, Decimal], now: datetime) -> Decimal:
    """weight(type) x confidence x 1 / (1 + min(days since last reference or creation, 30))
    + 0.1 x reference_count, in exact decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 50
        since = row["last_referenced_at"] or row["created_at"]
        micros = (now - since) // timedelta(microseconds=1)
        days = min(Decimal(30), max(Decimal(0), Decimal(micros) / Decimal(DAY_SECONDS * 1_000_000)))
        return weights[row["type"]] * row["confidence"] / (1 + days) + Decimal("0.1") * row["reference_count"]


def cost(content: str) -> int:
    return math.ceil(len(content) / 4) + 2


def check_selection(
    chosen: list[dict[str, Any]], rows: list[dict[str, Any]], weights: dict[str, Decimal], now: datetime,
    limit: int, budget: int,
) -> None:
    """(a)'s definition of a right selection of `rows` (each with "live") at `now`."""
    by_id = {r["id"]: r for r in rows}
    live = {r["id"]: r for r in rows if r["live"]}
    score = {i: expected_score(r, weights, now) for i, r in live.items()}
    ids = [c["id"] for c in chosen]

    # Never a memory that is not live (archived, deleted, superseded, expired, other profile).
    assert set(ids) <= set(live), [by_id.get(i) for i in set(ids) - set(live)]
    assert len(ids) == len(set(ids))
    # At most the limit, within the budget; each costs ceil(len / 4) + 2 tokens.
    assert len(ids) <= limit
    for c in chosen:
        assert c["tokens"] == cost(live[c["id"]]["content"])
        assert abs(Decimal(c["score"]) - score[c["id"]]) <= Decimal("0.00005") + EPSILON
    spent = sum(c["tokens"] for c in chosen)
    assert spent <= budget
    # Pinned first, then by non-increasing score.
    pinned = [live[i]["pinned"] for i in ids]
    assert pinned == sorted(pinned, reverse=True)
    for a, b in zip(ids, ids[1:], strict=False):
        if live[a]["pinned"] == live[b]["pinned"]:
            assert score[a] >= score[b] - EPSILON
    # Nothing left out ranks before something chosen...
    left_out = [i for i in live if i not in set(ids)]
    for x in left_out:
        for y in ids:
            assert live[x]["pinned"] < live[y]["pinned"] or (
                live[x]["pinned"] == live[y]["pinned"] and score[x] <= score[y] + EPSILON
            ), (live[x], live[y])
    # ... and the selection stops only at the limit, the end, or the first memory over budget.
    if len(ids) < min(limit, len(live)):
        best = max((live[x]["pinned"], score[x]) for x in left_out)
        next_ones = [x for x in left_out if live[x]["pinned"] == best[0] and score[x] >= best[1] - EPSILON]
        assert any(spent + cost(live[x]["content"]) > budget for x in next_ones)


@PROPERTY
@given(
    specs=st.lists(generated_memory, max_size=30),
    limit=st.integers(1, 50),
    budget=st.integers(1, 600),
)
def test_selection_order_limit_budget_and_liveness(client_db, postgres_conn, weights, specs, limit, budget):
    type_names = sorted(weights)
    with fresh_user(client_db, postgres_conn) as (user, profile):
        other = postgres_conn.execute(
            "insert into memory.profiles (user_id, name) values (%s, 'Other') returning id", [user]
        ).fetchone()[0]
        rows = insert_memories(postgres_conn, user, profile, other, specs, type_names)
        # One transaction: now() in select_memories is the now() read here.
        with client_db.transaction() as tx:
            now = tx.execute("select now() as now")[0]["now"]
            chosen = tx.call(
                "select_memories", user_id=user, profile_id=profile, limit=limit, token_budget=budget, record=False
            )
    check_selection(chosen, rows, weights, now, limit, budget)


# -- (a') selection through the profile's kept candidates --------------------------------------

#: Writes after the refresh, each through the table (so every trigger runs): what they set.
WRITES = {
    "pin": "pinned = true",
    "unpin": "pinned = false",
    "archive": "archived = true",
    "restore": "archived = false",
    "reinforce": "reference_count = reference_count + 1, last_referenced_at = now()",
    "doubt": "confidence = confidence / 2",
    "trust": "confidence = least(1, confidence * 2)",
    "retype": "type = case type when 'goal' then 'emotion' else 'goal' end",
}


def profile_rows(conn: Any, user: UUID, profile: UUID) -> list[dict[str, Any]]:
    """The user's memories as the model of (a) reads them, live meaning selectable for `profile`."""
    return conn.execute(
        """select id, content, type, confidence, pinned, reference_count, last_referenced_at, created_at,
            profile_id = %s and active and not archived and deleted_at is null
                and (expires_at is null or expires_at > now()) as live
        from memory.memories where user_id = %s""",
        [profile, user],
    )


@PROPERTY
@given(
    specs=st.lists(generated_memory, min_size=20, max_size=60),
    kept=st.sampled_from([0, 1, 1, 2, 3]),
    writes=st.lists(st.tuples(st.sampled_from(sorted(WRITES)), st.integers(0, 59)), max_size=8),
    aged=st.one_of(st.just(0), st.integers(0, 40 * DAY_SECONDS)),
    limit=st.integers(1, 50),
    budget=st.integers(1, 600),
)
def test_selection_from_kept_candidates_is_exact(
    client_db, postgres_conn, admin_url, weights, specs, kept, writes, aged, limit, budget
):
    """select_memories answers as (a) defines whatever the profile's selection holds: built by a
    refresh (for selections of `kept`, so a few dozen memories leave some out) or not (0), after writes
    that add or drop candidates, and after time has passed since it was built (every timestamp of
    the user moved back, triggers off, as if the clock had moved)."""
    type_names = sorted(weights)
    with fresh_user(client_db, postgres_conn) as (user, profile):
        other = postgres_conn.execute(
            "insert into memory.profiles (user_id, name) values (%s, 'Other') returning id", [user]
        ).fetchone()[0]
        rows = insert_memories(postgres_conn, user, profile, other, specs, type_names)
        if kept:
            # Built for selections of `kept` (2 x kept candidates); the setting is back as it was
            # when the transaction commits, so no other session sees it.
            with postgres_conn.transaction():
                setting = postgres_conn.execute(
                    "select value from memory_private.settings where key = 'memory_select_limit'"
                ).fetchone()[0]
                postgres_conn.execute(
                    "update memory_private.settings set value = %s where key = 'memory_select_limit'", [Jsonb(kept)]
                )
                postgres_conn.execute("select memory_private.refresh_memory_selection(%s)", [profile])
                postgres_conn.execute(
                    "update memory_private.settings set value = %s where key = 'memory_select_limit'", [Jsonb(setting)]
                )
        for write, index in writes:
            postgres_conn.execute(f"update memory.memories set {WRITES[write]} where id = %s",
                                  [rows[index % len(rows)]["id"]])
        if aged:
            with psycopg.connect(admin_url) as admin:
                admin.execute("set local session_replication_role = replica")
                admin.execute(
                    """update memory.memories set created_at = created_at - make_interval(secs => %(s)s),
                        last_referenced_at = last_referenced_at - make_interval(secs => %(s)s),
                        expires_at = expires_at - make_interval(secs => %(s)s)
                    where user_id = %(user)s""",
                    {"s": aged, "user": user},
                )
        with client_db.transaction() as tx:
            now = tx.execute("select now() as now")[0]["now"]
            chosen = tx.call(
                "select_memories", user_id=user, profile_id=profile, limit=limit, token_budget=budget, record=False
            )
            rows = profile_rows(tx, user, profile)
            bound = tx.execute("select bound from memory_private.memory_selections where profile_id = %s",
                               [profile])[0]["bound"]
    event(f"selection {'unbuilt' if bound == Decimal('Infinity') else 'of every memory' if bound is None else 'built'}")
    check_selection(chosen, rows, weights, now, limit, budget)


# -- (b) dedup ----------------------------------------------------------------------------------

PHRASES = [
    "Is training for the Auckland marathon in March",
    "Has a younger sister called Ana who lives in Wellington",
    "Prefers green tea to coffee in the morning",
    "Works as a night shift nurse at the city hospital",
    "Wants to learn to sail before turning forty",
    "Feels anxious before exams",
]
WORDS = ["really", "still", "now", "again", "Ana", "daily", "seriously", "marathon", "tea"]


@st.composite
def near_duplicate(draw: st.DrawFn) -> str:
    """A phrase, sometimes reworded a little: same words in another case or punctuation (a
    trigram duplicate), a word more or less, or a typo (sometimes a duplicate, sometimes not)."""
    text = draw(st.sampled_from(PHRASES))
    for _ in range(draw(st.integers(0, 3))):
        edit = draw(st.sampled_from(["upper", "lower", "punct", "add", "drop", "typo", "prefix"]))
        words = text.split()
        if edit == "upper":
            text = text.upper()
        elif edit == "lower":
            text = text.lower()
        elif edit == "punct":
            text = text + draw(st.sampled_from(["!", ".", "?!", " :)"]))
        elif edit == "add":
            words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(WORDS)))
            text = " ".join(words)
        elif edit == "drop" and len(words) > 2:
            del words[draw(st.integers(0, len(words) - 1))]
            text = " ".join(words)
        elif edit == "typo":
            at = draw(st.integers(0, len(text) - 1))
            text = text[:at] + draw(st.sampled_from("aeioxz")) + text[at + 1 :]
        elif edit == "prefix":
            text = draw(st.sampled_from(["User ", "They ", "Apparently "])) + text
    return text if text.strip() else PHRASES[0]


@PROPERTY
@given(
    calls=st.lists(
        st.tuples(near_duplicate(), st.sampled_from(["fact", "goal", "pattern"]), st.integers(0, 1_000)),
        min_size=1,
        max_size=12,
    )
)
def test_dedup_leaves_no_near_duplicates_and_counts_references(client_db, postgres_conn, calls):
    service = MemoryService(client_db)
    with fresh_user(client_db, postgres_conn) as (user, profile):
        outcomes = [
            service.create_memory(user, {"content": text, "type": kind, "confidence": conf / 1000}).outcome
            for text, kind, conf in calls
        ]
        near_pairs = postgres_conn.execute(
            """select a.content, b.content, extensions.similarity(a.content, b.content)
            from memory.memories as a
            join memory.memories as b on a.user_id = b.user_id and a.profile_id = b.profile_id and a.id < b.id
            where a.user_id = %(u)s and a.profile_id = %(p)s
                and a.active and not a.archived and a.deleted_at is null
                and b.active and not b.archived and b.deleted_at is null
                and extensions.similarity(a.content, b.content)
                    >= (memory_private.setting('dedup_threshold'))::numeric""",
            {"u": user, "p": profile},
        ).fetchall()
        stored, references = postgres_conn.execute(
            "select count(*), coalesce(sum(reference_count), 0) from memory.memories where user_id = %s", [user]
        ).fetchone()
    assert near_pairs == []
    assert outcomes.count("duplicate") == references
    assert outcomes.count("added") == stored


# -- (c) supersede ------------------------------------------------------------------------------

operations = st.lists(
    st.tuples(st.sampled_from(["revise", "forget", "restore"]), st.integers(0, 1_000)), max_size=20
)


@PROPERTY
@given(initial=st.integers(1, 4), ops=operations)
def test_supersede_chains_have_one_active_head_at_most(client_db, postgres_conn, initial, ops):
    service = MemoryService(client_db)
    with fresh_user(client_db, postgres_conn) as (user, _profile):
        model: dict[UUID, dict[str, Any]] = {}  # id -> {"deleted", "superseded_by"}
        order: list[UUID] = []
        for i in range(initial):
            memory = service.create_memory(user, {"content": f"fact {i}: {uuid4().hex}", "type": "fact"})
            if memory.id not in model:
                model[memory.id] = {"deleted": False, "superseded_by": None}
                order.append(memory.id)

        def active(i: UUID) -> bool:
            return not model[i]["deleted"] and model[i]["superseded_by"] is None

        for op, pick in ops:
            target = order[pick % len(order)]
            if op == "revise":
                if active(target):
                    new = service.update_memory(target, user, {"content": f"revised: {uuid4().hex}"})
                    model[target]["superseded_by"] = new.id
                    model[new.id] = {"deleted": False, "superseded_by": None}
                    order.append(new.id)
                else:
                    with pytest.raises(SupamemError) as err:
                        service.update_memory(target, user, {"content": "never stored"})
                    assert err.value.sqlstate == "55000"
            elif op == "forget":
                if not model[target]["deleted"]:
                    assert service.delete_memory(target, user) is True
                    model[target]["deleted"] = True
                else:
                    with pytest.raises(NotFoundError):
                        service.delete_memory(target, user)
            elif model[target]["deleted"]:
                restored = service.undo_delete(target, user)
                model[target]["deleted"] = False
                assert restored.active == active(target)
            else:
                with pytest.raises(NotFoundError):
                    service.undo_delete(target, user)

        rows = {
            r[0]: {"active": r[1], "deleted": r[2], "superseded_by": r[3], "number": r[4]}
            for r in postgres_conn.execute(
                "select id, active, deleted_at is not null, superseded_by, number from memory.memories where user_id = %s",
                [user],
            ).fetchall()
        }

    # The rows are what the calls made them.
    assert set(rows) == set(model)
    for i, row in rows.items():
        assert (row["active"], row["deleted"], row["superseded_by"]) == (
            active(i), model[i]["deleted"], model[i]["superseded_by"]
        )
    # Numbered from 1 in the order written, each version its own (seed 004's "M-143").
    assert [rows[i]["number"] for i in order] == list(range(1, len(order) + 1))
    # No superseded memory is active.
    assert not [i for i, r in rows.items() if r["superseded_by"] is not None and r["active"]]
    # Every chain (memories linked by superseded_by) has at most one active memory: its head.
    root = {i: i for i in rows}

    def find(i: UUID) -> UUID:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for i, r in rows.items():
        if r["superseded_by"] is not None:
            root[find(i)] = find(r["superseded_by"])
    chains: dict[UUID, list[UUID]] = {}
    for i in rows:
        chains.setdefault(find(i), []).append(i)
    for members in chains.values():
        heads = [i for i in members if rows[i]["superseded_by"] is None]
        assert len(heads) == 1  # a chain is a path ending in one head
        live = [i for i in members if rows[i]["active"]]
        assert len(live) <= 1 and set(live) <= set(heads)
