"""`make demo`: a guided tour of the kit on the local database.

Every step calls the same RPC functions and Python interfaces an app server would. The demo's
own data lives in a tenant named "supamem demo" that is wiped at the start of each run. The
extraction worker lives a layer up (the `jobs` package): its entry point, `python -m jobs.demo`,
hands `main` the function that runs a user's queued jobs.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable
from contextlib import closing
from typing import Any
from uuid import UUID

import psycopg

from .conversation_store import CURRENT, ConversationStore
from .db import Database, database_url
from .errors import NotFoundError, PermissionDeniedError
from .identity import Identity
from .metrics import MetricsService

#: Runs the jobs queued for one user, once, and says in a sentence what ran.
RunJobs = Callable[[Database, UUID], str]

DEMO_TENANT = "supamem demo"
OTHER_TENANT = "supamem demo: globex"
STUDIO_TENANT = "supamem demo: running studio"

_COLOR = sys.stdout.isatty() and os.environ.get("NO_COLOR") is None


def _style(code: str, text: str) -> str:
    return f"\033[{code}m{text}\033[0m" if _COLOR else text


def title(number: int, text: str) -> None:
    print()
    print(_style("1;36", f"{number}. {text}"))


def say(text: str) -> None:
    print(textwrap.fill(text, width=96, initial_indent="   ", subsequent_indent="   "))


def show(text: str) -> None:
    for line in text.splitlines() or [""]:
        print(_style("2", "   │ ") + line)


def check(ok: bool, text: str) -> None:
    mark = _style("1;32", "✓") if ok else _style("1;31", "✗")
    print(f"   {mark} {text}")
    if not ok:
        raise SystemExit(f"demo check failed: {text}")


def owner_connection() -> psycopg.Connection[Any]:
    """The database owner, for what the platform does outside the kit: Supabase Auth sign-ups,
    and moving the clock forward."""
    return psycopg.connect(database_url(), autocommit=True)


def sign_up(owner: psycopg.Connection[Any], email: str) -> UUID:
    """What Supabase Auth does when someone signs up: a row in auth.users."""
    row = owner.execute("insert into auth.users (id, email) values (gen_random_uuid(), %s) returning id", [email]).fetchone()
    assert row is not None
    return row[0]


def reset_demo_data(owner: psycopg.Connection[Any]) -> None:
    owner.execute(
        "delete from auth.users where email like %s", ["%@demo.supamem.dev"]
    )
    owner.execute("delete from memory.tenants where name in (%s, %s, %s)", [DEMO_TENANT, OTHER_TENANT, STUDIO_TENANT])


def conversation_story(db: Database, identity: Identity) -> None:
    store = ConversationStore(db, tenant_id=DEMO_TENANT, identity=identity)

    title(1, "A conversation, stored and read back in prompt format (seed 000's ConversationStore)")
    turns = [
        ("Show me laptops under $1000", "Here are three: the Aero 14, the Nova 13 and the Swift 5."),
        ("Which has the best battery?", "The Swift 5: about 14 hours of video playback."),
        ("Any with 32 GB of RAM?", "The Nova 13 comes with 32 GB in its top configuration."),
    ]
    for question, answer in turns:
        store.store_turn("maria", question, answer)
    history = store.get_history("maria")
    say("Maria asks three questions. Each turn is one `memory.add_turn` call: both messages in one")
    say("transaction, numbered by the database. This is what goes into the next prompt:")
    show(store.format_history_for_prompt(history))
    check([t["turn_number"] for t in history] == [1, 2, 3], "turns 1, 2, 3 in chronological order")

    title(2, 'References: "the first one", "yung una", "kanina"')
    say("Users point back at earlier turns in English and Filipino. The phrases are rows in")
    say("memory.reference_phrases, so a new language is an insert, not a deploy.")
    for phrase, expected in [
        ("Tell me more about the first one", 1),
        ("Magkano yung una?", 1),
        ("Ano ulit yung sinabi mo kanina?", 3),
        ("Compare it with the second one", 2),
    ]:
        turn = store.resolve_reference("maria", phrase)
        got = turn["turn_number"] if turn else None
        check(got == expected, f'"{phrase}" → turn {got}: {turn["user_query"] if turn else "-"}')

    title(3, "A rolling window of 10 turns")
    for n in range(4, 13):
        store.store_turn("maria", f"Question number {n}", f"Answer number {n}")
    history = store.get_history("maria", max_turns=50)
    numbers = [t["turn_number"] for t in history]
    say(f"Nine more turns (12 in all). The window keeps the newest ten: turns {numbers[0]}..{numbers[-1]}.")
    check(numbers == list(range(3, 13)), "turns 1 and 2 were dropped by the database on write")
    first = store.resolve_reference("maria", "yung una")
    check(first is not None and first["turn_number"] == 3, '"yung una" now means turn 3, the first one shown')

    title(4, "A 24-hour time to live")
    conversation = db.call_one(
        "current_conversation", user_id=identity.user("maria", DEMO_TENANT), match=CURRENT
    )
    assert conversation is not None
    with closing(owner_connection()) as owner:
        say("We move Maria's conversation 25 hours into the past (as the database owner).")
        owner.execute(
            "update memory.messages set created_at = created_at - interval '25 hours',"
            " expires_at = expires_at - interval '25 hours' where conversation_id = %s",
            [conversation["id"]],
        )
        owner.execute(
            "update memory.conversations set expires_at = expires_at - interval '25 hours',"
            " updated_at = updated_at - interval '25 hours' where id = %s",
            [conversation["id"]],
        )
        stored = owner.execute(
            "select count(*) from memory.messages where conversation_id = %s", [conversation["id"]]
        ).fetchone()
    history = store.get_history("maria")
    check(history == [], f"expired turns are never returned, even before a sweep ({stored[0]} rows still stored)")
    removed = store.cleanup_old_turns("maria")
    say("The sweep (pg_cron runs it every five minutes, in bounded batches) then deletes them:")
    check(removed >= 10, f"cleanup_old_turns removed {removed} expired turns")


def isolation_story(db: Database) -> None:
    title(5, "Row-level security: a second user sees nothing of the first")
    with closing(owner_connection()) as owner:
        ana = sign_up(owner, "ana@demo.supamem.dev")
        ben = sign_up(owner, "ben@demo.supamem.dev")
    say("Ana and Ben are Supabase Auth users. They call the same RPCs with their own JWT")
    say("(role authenticated): row-level security decides what each one reaches.")
    ana_chat = db.call_as(ana, "create_conversation", title="Trip to Kyoto")[0]
    db.call_as(ana, "add_turn", conversation_id=ana_chat["id"], user_content="Plan 3 days in Kyoto",
               assistant_content="Day 1: Fushimi Inari at dawn, then Gion in the evening …")
    ben_chat = db.call_as(ben, "create_conversation", title="Sourdough")[0]
    db.call_as(ben, "add_turn", conversation_id=ben_chat["id"], user_content="Why is my loaf flat?",
               assistant_content="Usually under-proofing, or a weak starter.")
    with db.as_user(ben) as tx:
        seen = tx.execute("select count(*) as n from memory.messages where conversation_id = %s",
                          [ana_chat["id"]])[0]["n"]
        history = tx.call("history", conversation_id=ana_chat["id"])
    check(seen == 0 and history == [], "Ben reads none of Ana's messages, by table or by RPC")
    try:
        db.call_as(ben, "add_message", conversation_id=ana_chat["id"], role="user", content="hi Ana")
        check(False, "Ben cannot write into Ana's conversation")
    except NotFoundError as exc:
        check(True, f"Ben cannot write into Ana's conversation, nor learn it exists ({exc.sqlstate}: {exc.message})")
    with db.as_user(ana) as tx:
        mine = tx.call("history", conversation_id=ana_chat["id"])
    check(len(mine) == 2, "Ana reads her own two messages")


def tenant_story(db: Database, identity: Identity) -> None:
    title(6, "Tenants: an admin sees their tenant's users and nothing else")
    acme = identity.tenant(DEMO_TENANT)
    with closing(owner_connection()) as owner:
        alice = sign_up(owner, "alice@demo.supamem.dev")
    with db.transaction() as tx:
        tx.execute("insert into memory.tenant_admins (tenant_id, user_id) values (%s, %s)", [acme, alice])
    for tenant, user, text in [(DEMO_TENANT, "carlos", "Reset my router"), (OTHER_TENANT, "dana", "Cancel my plan")]:
        user_id = identity.user(user, tenant)
        chat = db.call_one("create_conversation", user_id=user_id)
        assert chat is not None
        db.call("add_turn", conversation_id=chat["id"], user_content=text, assistant_content="Done.")
    say("Alice administers the demo tenant. Carlos is one of its users; Dana belongs to another")
    say("tenant. Alice signs in and reads the messages table directly, as the Data API would:")
    with db.as_user(alice) as tx:
        rows = tx.execute("select u.external_id, m.role, m.content from memory.messages as m"
                          " join memory.users as u on u.id = m.user_id order by m.id")
    show("\n".join(f"{r['external_id']:>8} {r['role']:>9}: {r['content']}" for r in rows) or "(nothing)")
    users = {r["external_id"] for r in rows}
    check("dana" not in users, "nothing of the other tenant's users")
    check(users == {"carlos"}, "her own tenant's user Carlos (Maria's turns expired in step 4)")
    try:
        db.call_as(alice, "kv_set", key="note", value={"x": 1}, user_id=identity.user("carlos", DEMO_TENANT))
        check(False, "Alice cannot write her users' data")
    except PermissionDeniedError:
        check(True, "reading is all an admin may do: writing Carlos's data is refused (42501)")


def memory_story(db: Database, identity: Identity, run_jobs: RunJobs) -> tuple[UUID, UUID]:
    """Luz's story; her id and her profile conversation's."""
    title(7, "Long-term memory, written by the extraction worker")
    with closing(owner_connection()) as owner:
        luz = sign_up(owner, "luz@demo.supamem.dev")
    db.call("register_user", user_id=luz, tenant_id=identity.tenant(STUDIO_TENANT))
    with db.as_user(luz) as tx:
        profile = tx.execute(
            "insert into memory.profiles (user_id, name, is_primary, timezone)"
            " values (%s, 'Luz', true, 'Pacific/Auckland') returning id",
            [luz],
        )[0]["id"]
    profiled = db.call_as(luz, "create_conversation", profile_id=profile, mode="astro")[0]
    generic = db.call_as(luz, "create_conversation", mode="chat")[0]

    def chat(conversation: dict[str, Any], *questions: str) -> None:
        for question in questions:
            db.call_as(luz, "add_turn", conversation_id=conversation["id"], user_content=question,
                       assistant_content="Noted!")
            show(f"Luz: {question}")

    def work() -> None:
        say(run_jobs(db, luz))

    def memories() -> list[dict[str, Any]]:
        return db.call_as(luz, "search_memories", status="all")

    say("Luz chats from her main profile; every answer queues an extraction job in the database")
    say("(seed 004's gate: primary profile, remember on, her own message). A generic chat queues none.")
    chat(profiled, "I'm training for the Auckland marathon in March", "I live in Wellington",
         "Any tips for long runs?")
    chat(generic, "I'm training for a triathlon too")
    work()
    live = [m for m in memories() if m["active"]]
    show("\n".join(f"[M-{m['number']} {m['type']}] {m['content']}" for m in live))
    check(len(live) == 2, "two memories from the profile conversation, none from the generic chat")
    check(db.call_as(luz, "turn_history", conversation_id=generic["id"]) != [], "the generic chat itself is kept")

    chat(profiled, "Did I say I'm training for the Auckland marathon in March?", "I moved to Christchurch")
    work()
    stored = memories()
    marathon = [m for m in stored if "marathon" in m["content"]]
    check(len(marathon) == 1, "the repeated goal is not stored twice")
    old = next(m for m in stored if m["content"] == "Lives in Wellington")
    new = next(m for m in stored if m["id"] == old["superseded_by"])
    check(not old["active"], f'the contradiction supersedes: "{old["content"]}" → "{new["content"]}"')

    context = db.call_as(luz, "prompt_context", conversation_id=profiled["id"], query="Where should I train?")[0]
    context = context["prompt_context"]
    say("The prompt context, one round trip: memories (pinned first, then seed 004's score, at most")
    say("10, within the token budget), the summary of turns 1-4, and the title the worker gave:")
    show("## What You Know About the User\n" + "\n".join(f"- {m['content']}" for m in context["memories"]))
    summary = context["conversation_summary"]
    show(f"## Conversation so far (turns {summary['from_turn']}-{summary['to_turn']})\n{summary['summary']}")
    with db.as_user(luz) as tx:
        name = tx.execute("select title from memory.conversations where id = %s", [profiled["id"]])[0]["title"]
    check(name is not None, f'the worker titled the conversation: "{name}"')
    with db.as_user(luz) as tx:
        events = tx.execute("select event, coalesce(new_content, '') as content from memory.memory_events"
                            " where user_id = %s order by id", [luz])
    show("\n".join(f"{e['event']:>10}  {e['content']}" for e in events))
    check(any(e["event"] == "supersede" for e in events), "every change is in the append-only history")

    days = db.call_as(luz, "memory_metrics")
    say("Seed 004's metrics, per user and day (memory.memory_metrics, GET /api/memories/metrics):")
    show("\n".join(f"{d['day']}: {d['answers']} answers, {d['answers_with_memories']} using memories, "
                   f"{d['extractions']} turns extracted, {d['memories_added']} memories added" for d in days))
    totals = (sum(d["answers"] for d in days), sum(d["extractions"] for d in days))
    check(totals == (6, 5), "six answers, the five of the profile conversation extracted (the generic chat's never)")
    return luz, profiled["id"]


def metrics_story(db: Database, luz: UUID, conversation: UUID) -> None:
    title(8, "Seed 004's success metrics: the month's report for a tenant")
    with db.as_user(luz) as tx:
        answer = tx.execute("select max(id) as id from memory.messages where conversation_id = %s and role = 'assistant'",
                            [conversation])[0]["id"]
    db.call_as(luz, "rate_answer", message_id=answer, helpful=True)
    db.call_as(luz, "note_dashboard_visit")
    say("Luz rates her last answer helpful and opens her memory settings (counted once a day).")
    say("Her running studio's admin reads the month (GET /api/metrics/success):")
    report = MetricsService(db).success_metrics(tenant_id=STUDIO_TENANT)
    show(f"active users {report.active_users}, answers {report.answers}\n"
         f"memories per 10 turns {report.memories_per_10_turns} (seed 004: 0.5-2.0)\n"
         f"reference rate {report.reference_rate} (30%+)\n"
         f"dashboard engagement {report.dashboard_engagement} (20% a month)\n"
         f"duplicate rate {report.duplicate_rate} of {report.live_memories} live memories (under 10%)")
    check(report.answers == 6 and report.dashboard_engagement == 1.0, "her six answers and her visit are counted")
    check(report.duplicate_rate == 0, "no live memory near-duplicates another: the repeated goal was merged on write")


def main(run_jobs: RunJobs) -> None:
    print(_style("1", "supamem — conversation memory that lives in your Supabase Postgres"))
    print(f"   database: {database_url().split('@')[-1]}")
    with closing(owner_connection()) as owner:
        reset_demo_data(owner)
    with Database() as db:
        identity = Identity(db)
        conversation_story(db, identity)
        isolation_story(db)
        tenant_story(db, identity)
        metrics_story(db, *memory_story(db, identity, run_jobs))
    print()
    print(_style("1;32", "All done.") + " Run `make test` for the full suite (pgTAP, pytest, sqlfluff, ruff),")
    print("and `make serve` for the HTTP app: the chat, the REST API and the Memory settings page.")
