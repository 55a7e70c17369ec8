"""Seed 004's pages as a person uses them: headless Chromium (Debian's package, driven by
Playwright) against the real app, database and worker. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from client_helpers import ROOT
from llm_server import Scripted, ScriptedLLMServer, llm_server, sse_chunks  # noqa: F401 (fixture)
from playwright.sync_api import Browser, Page, Route, expect, sync_playwright
from psycopg.types.json import Jsonb
from server_helpers import Person, Served, serve

from jobs.llm import LLMClient, LLMSettings

ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
# Chromium's own connections are refused on a closed network; these keep it to the page.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def signed_in(browser: Browser, served: Served, person: Person, then: str) -> Page:
    page = browser.new_context(accept_downloads=True, viewport={"width": 1100, "height": 800}).new_page()
    page.goto(f"{served.url}/signin#token={person.token}&next={then}")
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    return page


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def worker_once(person: Person, database_url: str) -> None:
    done = subprocess.run([sys.executable, "-m", "supamem.cli", "worker", "--once", "--user", str(person.id)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
                          env={"PATH": "/usr/bin:/bin", "DATABASE_URL": database_url, "SUPAMEM_LLM_PROVIDER": "offline"})
    assert done.returncode == 0, done.stderr


def with_main_profile(person: Person, *memories: tuple[str, str]) -> str:
    profile = person.http.post("/api/profiles", json={"name": "Me", "primary": True}).json()["id"]
    for content, kind in memories:
        assert person.http.post("/api/memories", json={"content": content, "type": kind}).status_code == 201
    return profile


def test_chat_shows_used_memories_and_the_saved_toast_with_undo(browser: Browser, served: Served, database_url: str) -> None:
    alice = served.person()
    with_main_profile(alice, ("Training for the Berlin marathon", "goal"))
    page = signed_in(browser, served, alice, "/chat")

    expect(page.locator("#memory-icon")).not_to_have_class("memory-icon off")
    expect(page.locator("#remember-toggle")).to_be_checked()
    expect(page.locator("#onboarding")).to_contain_text("When you talk from your Main Profile")
    page.click("#onboarding-ok")
    expect(page.locator("#onboarding")).to_be_hidden()

    page.fill("#chat-input", "How should I train this week?")
    page.click("#chat-form button[type=submit]")
    # Seed 004's chip: the memory's number and type; hovering shows the memory.
    chip = page.locator("#messages li.assistant .chip")
    expect(chip).to_have_text("[M-1 goal]")
    expect(page.locator("#messages li.assistant .chips")).to_have_text("Used: [M-1 goal]")
    expect(chip).to_have_attribute("title", "Training for the Berlin marathon")
    memory_id = chip.get_attribute("href").rsplit("memory-", 1)[1]

    page.fill("#chat-input", "I live in Lisbon.")
    page.click("#chat-form button[type=submit]")
    expect(page.locator("#messages li.assistant:not(.streaming)")).to_have_count(2)
    expect(page.locator("body[data-live=yes]")).to_be_attached()
    worker_once(alice, database_url)
    toast = page.locator("#toast")
    expect(toast).to_contain_text("This was saved")
    expect(toast).to_contain_text("Lisbon")
    shot(page, "chat")
    saved = alice.http.get("/api/memories", params={"search": "Lisbon"}).json()
    assert len(saved) == 1
    page.click("#toast-undo")
    expect(toast).to_contain_text("Removed from your memory.")
    assert alice.http.get(f"/api/memories/{saved[0]['id']}").json()["deleted_at"] is not None

    # Reopened (a refresh), the answer still shows the memory it used.
    page.reload()
    expect(page.locator("#messages li.assistant").first.locator(".chip")).to_have_text("[M-1 goal]")

    # A chip opens the memory in settings, anchored and highlighted.
    page.goto(f"{served.url}/settings/memory#memory-{memory_id}")
    expect(page.locator(f"#memory-{memory_id}")).to_have_class("highlight")
    expect(page.locator(f"#memory-{memory_id} .number")).to_have_text("M-1")
    shot(page, "settings-memory-chip-target")


def test_the_onboarding_notice_comes_when_a_generic_chat_turns_to_the_main_profile(browser: Browser, served: Served) -> None:
    """Seed 004's modal on the first profile-based chat, also when the chat became one after it began."""
    fay = served.person()
    main = with_main_profile(fay)
    generic = fay.http.post("/api/conversations", json={"mode": "chat"}).json()["id"]
    page = signed_in(browser, served, fay, f"/chat?c={generic}")
    expect(page.locator("#profile-select")).to_have_value("")
    expect(page.locator("#onboarding")).to_be_hidden()
    page.select_option("#profile-select", main)
    expect(page.locator("#onboarding")).to_contain_text("When you talk from your Main Profile")
    shot(page, "chat-onboarding-after-switch")
    page.click("#onboarding-ok")
    expect(page.locator("#onboarding")).to_be_hidden()
    assert fay.http.get(f"/api/conversations/{generic}").json()["profile_id"] == main


def test_the_sidebar_lists_searches_opens_renames_archives_unarchives_and_deletes_conversations(
    browser: Browser, served: Served
) -> None:
    dana = served.person()
    trip = dana.http.post("/api/conversations", json={"title": "Lisbon trip"}).json()["id"]
    baking = dana.http.post("/api/conversations", json={"title": "Baking"}).json()["id"]
    served.postgres_conn.execute("select memory.add_turn(%s, 'How long does sourdough rise?', 'Overnight.')", [baking])
    page = signed_in(browser, served, dana, "/chat")
    items = page.locator("#conversation-list button")
    expect(items).to_have_text(["Untitled conversation", "Baking", "Lisbon trip"])
    expect(items.first).to_have_class("active")

    page.fill("#conversation-search", "sourdough")
    expect(items).to_have_text(["Baking"])
    items.first.click()
    expect(page.locator("#messages li .text")).to_have_text(["How long does sourdough rise?", "Overnight."])
    expect(page.locator("#conversation-title")).to_have_value("Baking")
    expect(items.first).to_have_class("active")

    page.fill("#conversation-title", "Bread")
    page.press("#conversation-title", "Enter")
    expect(items).to_have_text(["Bread"])
    shot(page, "chat-conversations")
    assert dana.http.get(f"/api/conversations/{baking}").json()["title"] == "Bread"

    page.click("#archive-conversation")
    page.fill("#conversation-search", "")
    expect(items).to_have_text(["Untitled conversation", "Untitled conversation", "Lisbon trip"])
    assert dana.http.get(f"/api/conversations/{baking}").json()["archived"] is True

    page.check("#show-archived")
    expect(items).to_have_text(["Bread"])
    items.first.click()
    expect(page.locator("#messages li .text")).to_have_text(["How long does sourdough rise?", "Overnight."])
    expect(page.locator("#archived-note")).to_be_visible()
    for control in ("#chat-input", "#chat-send", "#conversation-title", "#remember-toggle"):
        expect(page.locator(control)).to_be_disabled()
    expect(items.first).to_have_class("active")
    shot(page, "chat-archived")
    page.click("#archive-conversation")
    expect(page.locator("#archived-note")).to_be_hidden()
    for control in ("#chat-input", "#chat-send", "#conversation-title"):
        expect(page.locator(control)).to_be_enabled()
    expect(page.locator("#archive-conversation")).to_have_text("Archive")
    expect(items).to_have_count(0)
    assert dana.http.get(f"/api/conversations/{baking}").json()["archived"] is False
    page.uncheck("#show-archived")
    expect(page.locator("#conversation-list button", has_text="Bread")).to_have_class("active")

    page.locator("#conversation-list button", has_text="Lisbon trip").click()
    expect(page.locator("#conversation-title")).to_have_value("Lisbon trip")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete-conversation")
    expect(page.locator("#conversation-list button", has_text="Lisbon trip")).to_have_count(0)
    assert dana.http.get(f"/api/conversations/{trip}").status_code == 404


def test_a_refresh_keeps_the_conversation_and_the_profile_select_changes_it(browser: Browser, served: Served) -> None:
    """Seed 002: the chat survives a refresh (its messages load with the page); seed 004: the
    profile selected is the conversation's."""
    erin = served.person()
    profile = with_main_profile(erin)
    page = signed_in(browser, served, erin, "/chat")
    page.fill("#chat-input", "Plan my running week")
    page.click("#chat-form button[type=submit]")
    expect(page.locator("#messages li.assistant:not(.streaming)")).to_have_count(1)
    conversation = page.url.rsplit("?c=", 1)[1]

    page.reload()
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    expect(page.locator("#messages li")).to_have_count(2)
    expect(page.locator("#messages li.user")).to_have_text("Plan my running week")
    assert page.url.endswith(f"/chat?c={conversation}")
    expect(page.locator("#conversation-list button.active")).to_have_attribute("data-id", conversation)
    assert [c["id"] for c in erin.http.get("/api/conversations").json()] == [conversation], "a refresh starts nothing"

    expect(page.locator("#memory-icon")).not_to_have_class("memory-icon off")
    page.select_option("#profile-select", "")
    expect(page.locator("#memory-icon")).to_have_class("memory-icon off")
    assert erin.http.get(f"/api/conversations/{conversation}").json()["profile_id"] is None
    page.select_option("#profile-select", profile)
    expect(page.locator("#memory-icon")).not_to_have_class("memory-icon off")
    assert erin.http.get(f"/api/conversations/{conversation}").json()["profile_id"] == profile

    gone = "00000000-0000-4000-8000-000000000000"
    page.goto(f"{served.url}/chat?c={gone}")
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    expect(page.locator("#messages li")).to_have_count(0)
    expect(page.locator("#error")).to_be_hidden()
    assert gone not in page.url and "?c=" in page.url, "a conversation that is gone gives way to a new one"


def test_the_asker_rates_an_answer_and_a_refresh_keeps_the_rating(browser: Browser, served: Served) -> None:
    """Seed 004's helpfulness, as a person gives it: a thumb under each answer, pressed again to
    take it back, kept by the answer across a refresh."""
    gina = served.person()
    page = signed_in(browser, served, gina, "/chat")
    page.fill("#chat-input", "Plan my running week")
    page.click("#chat-form button[type=submit]")
    answer = page.locator("#messages li.assistant:not(.streaming)")
    expect(answer).to_have_count(1)
    helpful, unhelpful = answer.locator("button.rate[data-helpful=true]"), answer.locator("button.rate[data-helpful=false]")
    expect(helpful).to_have_attribute("aria-pressed", "false")
    helpful.click()
    expect(helpful).to_have_attribute("aria-pressed", "true")
    shot(page, "chat-rated")
    conversation = page.url.rsplit("?c=", 1)[1]
    stored = gina.http.get(f"/api/conversations/{conversation}").json()["messages"]
    assert [(m["role"], m["helpful"]) for m in stored] == [("user", None), ("assistant", True)]

    page.reload()
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    expect(helpful).to_have_attribute("aria-pressed", "true")
    unhelpful.click()
    expect(unhelpful).to_have_attribute("aria-pressed", "true")
    expect(helpful).to_have_attribute("aria-pressed", "false")
    unhelpful.click()
    expect(unhelpful).to_have_attribute("aria-pressed", "false")
    stored = gina.http.get(f"/api/conversations/{conversation}").json()["messages"]
    assert stored[1]["helpful"] is None, "pressed again, the rating is taken back"
    expect(page.locator("#messages li.user button.rate")).to_have_count(0)


def test_opening_the_memory_settings_counts_a_dashboard_visit(browser: Browser, served: Served) -> None:
    hank = served.person()
    visits = "select count(*) from memory_private.dashboard_visits where user_id = %s"
    assert served.postgres_conn.execute(visits, [hank.id]).fetchone() == (0,)
    page = signed_in(browser, served, hank, "/settings/memory")
    page.reload()
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    assert served.postgres_conn.execute(visits, [hank.id]).fetchone() == (1,), "counted once a day"


def test_the_answer_appears_as_the_model_writes_it(
    browser: Browser, database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    release = threading.Event()
    llm_server.enqueue(Scripted(200, chunks=sse_chunks("Rest", " on", " Sunday."), between=lambda: release.wait(30)))
    model = LLMClient(LLMSettings(provider="openai", base_url=llm_server.base_url, api_key="k", max_retries=0))
    for served in serve(database_url, postgres_conn, llm=model):
        ines = served.person()
        page = signed_in(browser, served, ines, "/chat")
        try:
            page.fill("#chat-input", "When should I rest?")
            page.click("#chat-form button[type=submit]")
            expect(page.locator("#messages li.assistant.streaming")).to_have_text("Rest")
            shot(page, "chat-streaming")
            release.set()
            expect(page.locator("#messages li.assistant:not(.streaming) .text")).to_have_text("Rest on Sunday.")
            expect(page.locator("#error")).to_be_hidden()
            stored = postgres_conn.execute(
                "select content from memory.messages where user_id = %s and role = 'assistant'", [ines.id]).fetchall()
            assert stored == [("Rest on Sunday.",)]
        finally:
            release.set()
            page.context.close()  # its live event stream would keep this server from stopping


def test_a_participant_chats_in_a_shared_conversation_from_their_own_profile(browser: Browser, served: Served) -> None:
    """Seed 004: profile selection works in together mode: the participant picks their own Main
    Profile for the shared conversation, and their memory icon lights up; the owner's is unchanged."""
    owner, guest = served.person(), served.person()
    guest_profile = with_main_profile(guest)
    shared = owner.http.post("/api/conversations", json={"title": "Trip planning", "mode": "together"}).json()["id"]
    assert owner.http.post(f"/api/conversations/{shared}/participants", json={"user_id": str(guest.id)}).status_code == 201
    served.postgres_conn.execute("select memory.add_turn(%s, 'Where should we go?', 'Porto or Lisbon.')", [shared])

    page = signed_in(browser, served, guest, f"/chat?c={shared}")
    expect(page.locator("#messages li")).to_have_text(["Where should we go?", "Porto or Lisbon."])
    expect(page.locator("#profile-select")).to_have_value("")
    expect(page.locator("#memory-icon")).to_have_class("memory-icon off")
    expect(page.locator("#remember-toggle")).to_be_disabled()
    expect(page.locator("#conversation-title")).to_be_disabled()
    for owners_only in ("#archive-conversation", "#delete-conversation"):
        expect(page.locator(owners_only)).to_be_hidden()
    page.select_option("#profile-select", guest_profile)
    expect(page.locator("#memory-icon")).not_to_have_class("memory-icon off")
    assert guest.http.get(f"/api/conversations/{shared}/participants/me").json()["profile_id"] == guest_profile
    assert owner.http.get(f"/api/conversations/{shared}").json()["profile_id"] is None, "the owner's choice is untouched"

    page.fill("#chat-input", "I vote for Porto")
    page.click("#chat-form button[type=submit]")
    expect(page.locator("#messages li.assistant:not(.streaming)")).to_have_count(2)
    assert page.url.endswith(f"?c={shared}"), "the guest stays in the shared conversation"
    authors = served.postgres_conn.execute(
        "select author_id from memory.messages where conversation_id = %s and role = 'user' order by turn_number", [shared]
    ).fetchall()
    assert authors == [(None,), (guest.id,)]
    shot(page, "chat-together")
    page.reload()
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    expect(page.locator("#profile-select")).to_have_value(guest_profile)


def test_a_generic_chat_shows_a_grey_icon(browser: Browser, served: Served) -> None:
    bob = served.person()
    page = signed_in(browser, served, bob, "/chat")
    expect(page.locator("#memory-icon")).to_have_class("memory-icon off")
    expect(page.locator("#remember-toggle")).to_be_disabled()
    expect(page.locator("#onboarding")).to_be_hidden()


def test_settings_filter_search_delete_clear_and_export(browser: Browser, served: Served, tmp_path: Path) -> None:
    carol = served.person()
    with_main_profile(carol, ("Wants to learn Korean", "goal"), ("Journals every night", "pattern"),
                      ("Lives in Porto", "fact"))
    page = signed_in(browser, served, carol, "/settings/memory")
    expect(page.locator("#explanation")).to_contain_text("Memories are only created when you select 'My Main Profile'")
    expect(page.locator("#count-live")).to_have_text("3")
    expect(page.locator("#storage")).to_have_text(re.compile(r"^\d+\.\d kB stored$"))
    expect(page.locator("#status-building")).to_have_text("building")
    expect(page.locator("#memory-list li")).to_have_count(3)
    shot(page, "settings")
    expect(page.locator("#profile-filter-label")).to_be_hidden()  # one profile: nothing to filter by

    page.select_option("#type-filter", "goal")
    expect(page.locator("#memory-list li")).to_have_count(1)
    expect(page.locator("#memory-list li")).to_contain_text("Wants to learn Korean")
    page.select_option("#type-filter", "")
    page.fill("#search", "Porto")
    page.click("#filters button[type=submit]")
    expect(page.locator("#memory-list li")).to_have_count(1)
    page.fill("#search", "")
    page.click("#filters button[type=submit]")
    expect(page.locator("#memory-list li")).to_have_count(3)

    page.click("#memory-list li:has-text('Lives in Porto') button.delete")
    expect(page.locator("#memory-list li")).to_have_count(2)
    expect(page.locator("#count-deleted")).to_have_text("1")

    with page.expect_download() as download:
        page.click("#export-json")
    exported = json.loads(Path(download.value.path()).read_text())
    contents = sorted(m["content"] for m in exported["memories"])
    assert contents == ["Journals every night", "Lives in Porto", "Wants to learn Korean"]
    with page.expect_download() as download:
        page.click("#export-csv")
    assert download.value.suggested_filename == "memories.csv"
    csv_file = tmp_path / "memories.csv"
    download.value.save_as(csv_file)
    assert "Wants to learn Korean" in csv_file.read_text()

    page.click("#pause-toggle")
    expect(page.locator("#status-building")).to_have_text("paused")
    assert carol.http.get("/api/memories/overview").json()["memory_paused"] is True

    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#clear-all")
    expect(page.locator("#memory-list li")).to_have_count(2)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#clear-all")
    expect(page.locator("#memory-list li")).to_have_count(0)
    expect(page.locator("#memory-empty")).to_be_visible()
    assert carol.http.get("/api/memories/overview").json()["live"] == 0
    # Cleared is undoable: the deleted ones are listed, and one restored is live again.
    page.select_option("#status-filter", "deleted")
    expect(page.locator("#memory-list li")).to_have_count(3)
    shot(page, "settings-deleted")
    page.click("#memory-list li:has-text('Lives in Porto') button.restore")
    expect(page.locator("#count-live")).to_have_text("1")
    expect(page.locator("#memory-list li")).to_have_count(2)
    assert [m["content"] for m in carol.http.get("/api/memories").json()] == ["Lives in Porto"]
    page.select_option("#status-filter", "active")

    # The CSV download put back by its file, here into another account (seed 004's re-import);
    # twice adds nothing.
    dave = served.person()
    other = signed_in(browser, served, dave, "/settings/memory")
    other.set_input_files("#import-file", str(csv_file))
    expect(other.locator("#import-result")).to_have_text("3 memories imported.")
    expect(other.locator("#memory-list li")).to_have_count(2)  # the deleted one stays deleted
    other.set_input_files("#import-file", str(csv_file))
    expect(other.locator("#import-result")).to_have_text("0 memories imported.")
    shot(other, "settings-imported")


def test_settings_filter_by_profile_and_opt_in_to_long_term_storage(browser: Browser, served: Served) -> None:
    """Seed 004: with two profiles, the list filters by profile (the filter shows only then); the
    long-term opt-in is a toggle that the status line and the user's settings follow."""
    erin = served.person()
    main = with_main_profile(erin, ("Plays the cello", "pattern"))
    work = erin.http.post("/api/profiles", json={"name": "Work"}).json()["id"]
    assert erin.http.post("/api/memories", json={"content": "Leads the data team", "type": "fact",
                                                 "profile_id": work}).status_code == 201
    page = signed_in(browser, served, erin, "/settings/memory")
    expect(page.locator("#profile-filter-label")).to_be_visible()
    expect(page.locator("#memory-list li")).to_have_count(2)
    page.select_option("#profile-filter", work)
    page.click("#filters button[type=submit]")
    expect(page.locator("#memory-list li")).to_have_count(1)
    expect(page.locator("#memory-list li")).to_contain_text("Leads the data team")
    page.select_option("#profile-filter", main)
    page.click("#filters button[type=submit]")
    expect(page.locator("#memory-list li")).to_contain_text("Plays the cello")

    expect(page.locator("#status-optin")).to_have_text("off")
    page.click("#optin-toggle")
    expect(page.locator("#status-optin")).to_have_text("on")
    assert erin.http.get("/api/memories/overview").json()["long_term_opt_in"] is True
    page.click("#optin-toggle")
    expect(page.locator("#status-optin")).to_have_text("off")
    assert erin.http.get("/api/memories/overview").json()["long_term_opt_in"] is False


def test_settings_pin_edit_category_filter_and_an_older_memory_a_chip_names(browser: Browser, served: Served) -> None:
    """Seed 002's memory panel (filter by category, edit, pin) and seed 004's chip link to a memory
    older than the list's 30 days, naming the archived conversation it came from; a search reaches
    old memories, and archived ones are listed apart and brought back."""
    gina = served.person()
    with_main_profile(gina)
    for content, category in (("Runs at dawn", "sport"), ("Reads poetry", "culture")):
        gina.http.post("/api/memories", json={"content": content, "type": "pattern", "category": category})
    old = gina.http.post("/api/memories", json={"content": "Grew up in Braga", "type": "fact"}).json()["memory"]["id"]
    trip = gina.http.post("/api/conversations", json={"title": "Old trip"}).json()["id"]
    assert gina.http.put(f"/api/conversations/{trip}", json={"archived": True}).status_code == 200
    served.postgres_conn.execute("update memory.memories set created_at = now() - interval '90 days',"
                                 " source_conversation_id = %s where id = %s", [trip, old])

    page = signed_in(browser, served, gina, f"/settings/memory#memory-{old}")
    anchored = page.locator(f"#memory-{old}")
    expect(anchored).to_have_class("highlight")
    expect(anchored).to_contain_text("Grew up in Braga")
    expect(anchored.locator(".source")).to_have_text("from “Old trip”")  # an archived conversation's title too
    expect(page.locator("#memory-list li")).to_have_count(3)

    page.goto(f"{served.url}/settings/memory")
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    expect(page.locator("#memory-list li")).to_have_count(2)
    page.fill("#category-filter", "sport")
    page.press("#category-filter", "Enter")
    expect(page.locator("#memory-list li")).to_have_count(1)
    expect(page.locator("#memory-list li")).to_contain_text("Runs at dawn")

    page.click("#memory-list li:has-text('Runs at dawn') button.pin")
    expect(page.locator("#memory-list li.pinned")).to_contain_text("Runs at dawn")
    expect(page.locator("#count-pinned")).to_have_text("1")

    page.click("#memory-list li:has-text('Runs at dawn') button.edit")
    page.fill("#memory-list .edit-content", "Runs at dawn, five days a week")
    # Another device adds a memory meanwhile: the list is redrawn live, the edit stays open as typed.
    expect(page.locator("body[data-live=yes]")).to_be_attached()
    gina.http.post("/api/memories", json={"content": "Swims on Sundays", "type": "pattern", "category": "sport"})
    expect(page.locator("#memory-list li")).to_have_count(2)
    expect(page.locator("#memory-list .edit-content")).to_have_value("Runs at dawn, five days a week")
    page.click("#memory-list .edit-form button.save")
    expect(page.locator("#memory-list li:has-text('five days a week')")).to_have_count(1)
    expect(page.locator("#memory-list .edit-form")).to_have_count(0)
    expect(page.locator("#count-pinned")).to_have_text("1")
    expect(page.locator("#count-live")).to_have_text("4")
    shot(page, "settings-edit")
    live = gina.http.get("/api/memories", params={"category": "sport"}).json()
    assert sorted(m["content"] for m in live) == ["Runs at dawn, five days a week", "Swims on Sundays"], \
        "the edit is the live version"

    # A search reaches a memory older than the list's 30 days; archived memories are a view of
    # their own, where one is brought back.
    page.fill("#category-filter", "")
    page.fill("#search", "Braga")
    page.press("#search", "Enter")
    expect(page.locator("#memory-list li")).to_have_count(1)
    expect(page.locator("#memory-list li")).to_contain_text("Grew up in Braga")
    served.postgres_conn.execute("update memory.memories set archived = true where user_id = %s and content = 'Reads poetry'",
                                 [gina.id])
    page.fill("#search", "")
    page.select_option("#status-filter", "archived")
    expect(page.locator("#memory-list li")).to_have_count(1)
    expect(page.locator("#memory-list li")).to_contain_text("Reads poetry")
    shot(page, "settings-archived")
    page.click("#memory-list li button.unarchive")
    expect(page.locator("#memory-list li")).to_have_count(0)
    page.select_option("#status-filter", "active")
    expect(page.locator("#memory-list li:has-text('Reads poetry')")).to_have_count(1)


def test_a_memory_from_a_deleted_conversation_says_so_not_added_by_hand(browser: Browser, served: Served) -> None:
    """Seed 004: each memory shows which conversation it came from; once that conversation is
    deleted (or swept), it still reads as drawn from one, not as added by hand."""
    iris = served.person()
    profile = with_main_profile(iris, ("Owns a red bicycle", "fact"))
    told = iris.http.post("/chat", json={"message": "I keep bees in the garden", "profile_id": profile}).json()
    served.postgres_conn.execute(
        "select memory.remember('Keeps bees in the garden', 'fact', %s, p_source_message_id => %s)",
        [iris.id, told["answer_id"] - 1])
    assert iris.http.delete(f"/api/conversations/{told['conversation_id']}").status_code == 204
    page = signed_in(browser, served, iris, "/settings/memory")
    expect(page.locator("#memory-list li", has_text="Keeps bees").locator(".source")).to_have_text(
        "from a conversation since deleted")
    expect(page.locator("#memory-list li", has_text="red bicycle").locator(".source")).to_have_text("added by hand")
    shot(page, "settings-source-deleted")


def test_an_answer_that_cannot_be_stored_is_shown_with_why(
    browser: Browser, database_url: str, postgres_conn: psycopg.Connection, llm_server: ScriptedLLMServer,  # noqa: F811
) -> None:
    """Seed 001: the database refuses the turn (its conversation was deleted while the model wrote),
    the person still reads the answer, and the page says it was not stored."""
    model = LLMClient(LLMSettings(provider="openai", base_url=llm_server.base_url, api_key="k", max_retries=0))
    for served in serve(database_url, postgres_conn, llm=model):
        lev = served.person()
        llm_server.enqueue(Scripted(200, chunks=sse_chunks("Gone", " soon."), between=lambda user=lev.id: postgres_conn.execute(
            "delete from memory.conversations where user_id = %s", [user])))
        page = signed_in(browser, served, lev, "/chat")
        try:
            page.fill("#chat-input", "Are you there?")
            page.click("#chat-form button[type=submit]")
            expect(page.locator("#messages li.assistant:not(.streaming) .text")).to_have_text("Gone soon.")
            expect(page.locator("#error")).to_contain_text("the answer could not be stored")
            expect(page.locator("#messages li.assistant button.rate")).to_have_count(0)
            shot(page, "chat-unstored")
        finally:
            page.context.close()


def test_a_memory_added_before_the_live_stream_opens_is_listed_once_it_opens(browser: Browser, served: Served) -> None:
    """Announcements are not replayed: the settings list reads itself again when its stream opens,
    so a memory another device added while none was open (the page loading, a stream reconnecting)
    is listed."""
    ines = served.person()
    with_main_profile(ines)
    ines.http.post("/api/memories", json={"content": "Plays the cello", "type": "fact"})
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    opened: list[str] = []

    def meanwhile(route: Route) -> None:
        if not opened:
            ines.http.post("/api/memories", json={"content": "Sings in a choir", "type": "fact"})
        opened.append(route.request.url)
        route.continue_()

    context.route("**/api/events", meanwhile)
    page = context.new_page()
    page.goto(f"{served.url}/signin#token={ines.token}&next=/settings/memory")
    expect(page.locator("body[data-live=yes]")).to_be_attached()
    expect(page.locator("#memory-list li")).to_have_count(2)
    expect(page.locator("#memory-list")).to_contain_text("Sings in a choir")
    expect(page.locator("#count-live")).to_have_text("2")
    assert len(opened) == 1


def test_extract_memories_queues_the_turns_said_while_remember_was_off(browser: Browser, served: Served) -> None:
    hugo = served.person()
    with_main_profile(hugo)
    page = signed_in(browser, served, hugo, "/chat")
    page.click("#onboarding-ok")
    page.uncheck("#remember-toggle")
    expect(page.locator("#memory-icon")).to_have_class("memory-icon off")
    page.fill("#chat-input", "I moved to Lisbon last spring.")
    page.click("#chat-form button[type=submit]")
    expect(page.locator("#messages li.assistant:not(.streaming)")).to_have_count(1)
    page.click("#extract-memories")
    expect(page.locator("#toast")).to_contain_text("Nothing to extract here")

    page.check("#remember-toggle")
    page.click("#extract-memories")
    expect(page.locator("#toast")).to_contain_text("Looking for memories in 1 turn.")
    queued = served.postgres_conn.execute(
        "select count(*) from memory_private.jobs where user_id = %s and kind = 'extract'", [hugo.id]).fetchone()
    assert queued == (1,)


def test_summaries_show_their_themes_mark_recurring_ones_and_compare_a_year_on_demand(
    browser: Browser, served: Served, database_url: str,
) -> None:
    """Seed 004's summary pages: a month's emotional and cognitive summaries and themes, a theme of
    several months marked (pattern highlighting), a week's themes and patterns, and the year-over-year
    comparison asked for from the month viewed, shown once the worker has written it."""
    jose = served.person()
    profile = with_main_profile(jose)
    now = datetime.now(UTC)
    conn = served.postgres_conn
    # Seed 004's astrological context (dominant transits, planetary influences) is the month's context.
    for year, feeling, thinking, themes, context in (
        (now.year, "A calm month.", "Planned ahead.", ["running", "family"], {"dominant_transits": "Saturn trine Sun"}),
        (now.year - 1, "A busy month.", "Reacted a lot.", ["running", "work"], {}),
    ):
        conn.execute(
            "insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary, cognitive_summary,"
            " key_themes, context) values (%s, %s, %s, %s, %s, %s, %s, %s)",
            [jose.id, profile, year, now.month, feeling, thinking, themes, Jsonb(context)])
    conn.execute(
        "insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date,"
        " emotional_summary, key_themes, dominant_patterns, conversation_count)"
        " select %s, %s, extract(isoyear from d), extract(week from d), d, d + 6, 'A steady week.', '{running}',"
        " '{early runs}', 2 from (select date_trunc('week', now())::date as d) as x", [jose.id, profile])

    page = signed_in(browser, served, jose, "/settings/memory")
    this_month = page.locator(f"#month-{now.year}-{now.month:02d}")
    expect(this_month).to_contain_text("A calm month.")
    expect(this_month.locator(".cognitive")).to_have_text("Planned ahead.")
    expect(this_month.locator(".theme.recurring")).to_have_text(["running"])
    expect(this_month.locator(".theme:not(.recurring)")).to_have_text(["family"])
    expect(this_month.locator(".context")).to_have_text("dominant transits: Saturn trine Sun")
    expect(page.locator("#weekly li")).to_contain_text("A steady week.")
    expect(page.locator("#weekly li .theme")).to_have_text(["running", "early runs"])

    last_year = page.locator(f"#month-{now.year - 1}-{now.month:02d}")
    last_year.locator("button.compare").click()
    expect(last_year.locator(".comparison")).to_contain_text("Nothing to compare yet")
    this_month.locator("button.compare").click()
    expect(this_month.locator(".comparison")).to_contain_text(f"Comparing with {now.year - 1}")
    worker_once(jose, database_url)
    (written,) = conn.execute("select comparison from memory.yearly_comparisons where profile_id = %s", [profile]).fetchone()
    expect(this_month.locator(".comparison")).to_have_text(written, timeout=10_000)
    shot(page, "settings-summaries")


def test_a_page_without_a_sign_in_says_so(browser: Browser, served: Served) -> None:
    page = browser.new_page()
    page.goto(f"{served.url}/settings/memory")
    expect(page.locator("#error")).to_contain_text("Sign in first")


@pytest.mark.parametrize("target", [
    "javascript:document.body.dataset.ran='yes'",
    "https://elsewhere.example/chat",
    "//elsewhere.example/chat",
    "/\\elsewhere.example/chat",
])
def test_a_sign_in_link_goes_only_to_a_page_of_this_site(browser: Browser, served: Served, target: str) -> None:
    erin = served.person()
    page = browser.new_page()
    left: list[str] = []
    page.on("request", lambda request: left.append(request.url) if not request.url.startswith(served.url) else None)
    page.goto(f"{served.url}/signin#token={erin.token}&next={quote(target)}")
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    assert page.url.split("?")[0] == f"{served.url}/chat"
    assert page.evaluate("document.body.dataset.ran") is None
    assert left == []


def test_a_sign_in_link_of_another_account_asks_before_switching(browser: Browser, served: Served) -> None:
    frank, mallory = served.person(), served.person()
    page = signed_in(browser, served, frank, "/chat")
    asked: list[str] = []

    def answer(dialog: Any, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, False))
    page.goto(f"{served.url}/signin#token={mallory.token}&next=/chat")
    expect(page.locator("body[data-page=chat][data-ready=yes]")).to_be_attached()
    assert asked == ["This link signs you in as another account. Switch to it?"]
    assert page.evaluate("sessionStorage.getItem('supamem.token')") == frank.token, "declined: still Frank"

    page.once("dialog", lambda dialog: answer(dialog, True))
    page.goto(f"{served.url}/signin#token={mallory.token}&next=/chat")
    expect(page.locator("body[data-page=chat][data-ready=yes]")).to_be_attached()
    assert page.evaluate("sessionStorage.getItem('supamem.token')") == mallory.token


def test_the_onboarding_notice_is_each_accounts_own(browser: Browser, served: Served) -> None:
    """Seed 004's onboarding comes with each user's first profile chat: dismissed by one account, it
    still comes for another signed in on the same browser."""
    gus, hal = served.person(), served.person()
    with_main_profile(gus)
    with_main_profile(hal)
    page = signed_in(browser, served, gus, "/chat")
    expect(page.locator("#onboarding")).to_be_visible()
    page.click("#onboarding-ok")
    page.reload()
    expect(page.locator("body[data-ready=yes]")).to_be_attached()
    expect(page.locator("#onboarding")).to_be_hidden()
    page.once("dialog", lambda dialog: dialog.accept())
    page.goto(f"{served.url}/signin#token={hal.token}&next=/chat")
    expect(page.locator("body[data-page=chat][data-ready=yes]")).to_be_attached()
    expect(page.locator("#onboarding")).to_be_visible()


def test_pages_run_only_this_sites_scripts_and_are_framed_by_nobody(served: Served) -> None:
    erin = served.person()
    for path in ("/signin", "/chat", "/settings/memory"):
        policy = erin.http.get(path).headers["content-security-policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
