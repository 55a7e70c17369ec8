"""The offline provider: deterministic rule-based answers, through the same client code as a model."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.llm import LLMBadResponse, LLMClient, LLMSettings
from jobs.offline import OFFLINE_MODEL, OfflineProvider, extract_operations
from jobs.prompts import build_prompt, embed_job_input, extract_job_input
from jobs.schemas import (
    ConversationSummaryOutput,
    ExtractionOutput,
    MonthlySummaryOutput,
    TitleOutput,
    WeeklySummaryOutput,
    YearComparisonOutput,
)


@pytest.fixture(scope="module")
def llm() -> LLMClient:
    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"the offline provider never needs a retry (asked to sleep {seconds})")

    return LLMClient(LLMSettings(provider="offline"), sleep=no_sleep)


def run(llm: LLMClient, job_input: dict[str, Any]):
    prompt = build_prompt(job_input)
    return llm.complete(prompt.messages, prompt.output, name=prompt.name, check=prompt.check)


def extract_job(user_message: str, existing: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What memory.job_input returns for an extract job."""
    return {
        "kind": "extract",
        "user_id": str(uuid.uuid4()),
        "source_message_id": 42,
        "mode": "chat",
        "user_message": user_message,
        "assistant_message": "I see. Tell me more.",
        "existing_memories": existing or [],
    }


def ops(llm: LLMClient, user_message: str, existing: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    return run(llm, extract_job(user_message, existing)).value.to_operations()


def memory(content: str, type_: str = "fact") -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "content": content, "type": type_}


# --- the provider as a transport ---------------------------------------------------------------------


def test_same_input_same_output(llm: LLMClient) -> None:
    prompt = build_prompt(extract_job("I live in Lisbon and I love fado. I want to learn the guitar."))
    payload = {"model": OFFLINE_MODEL, "messages": prompt.messages}

    first, second = OfflineProvider().chat(payload), OfflineProvider().chat(json.loads(json.dumps(payload)))

    assert first == second
    assert run(llm, extract_job("I live in Lisbon.")).value == run(llm, extract_job("I live in Lisbon.")).value


def test_it_is_labelled_offline(llm: LLMClient) -> None:
    result = run(llm, extract_job("I live in Lisbon."))

    assert result.usage.model == "supamem-offline"
    assert result.usage.provider == "offline"
    assert result.usage.estimated is True  # it reports no usage, so the client estimates it
    assert result.usage.total_tokens > 0
    assert result.attempts == 1


def test_the_request_it_answers_is_the_real_one(llm: LLMClient) -> None:
    prompt = build_prompt(extract_job("I live in Lisbon."))
    response = OfflineProvider().chat({"messages": prompt.messages})
    assert response["model"] == OFFLINE_MODEL
    assert "usage" not in response
    ExtractionOutput.model_validate_json(response["choices"][0]["message"]["content"], strict=True)


def test_without_a_job_input_it_refuses(llm: LLMClient) -> None:
    with pytest.raises(LLMBadResponse, match="no fenced JSON job input"):
        llm.complete([{"role": "user", "content": "Hello"}], TitleOutput, name="t")


def test_embed_and_extract_round_trip() -> None:
    data = {"kind": "extract", "user_message": 'He said "```json\n{}\n```" to me', "existing_memories": []}
    text = f"Please do it.\n\n{embed_job_input(data)}\n\nThanks."
    assert extract_job_input(text) == data
    with pytest.raises(ValueError):
        extract_job_input("no block here")


def test_the_prompt_keeps_ids_out_except_memory_ids() -> None:
    job = extract_job("I live in Lisbon.", [memory("Lives in Porto")])
    user_message = build_prompt(job).messages[-1]["content"]
    assert job["user_id"] not in user_message
    assert '"source_message_id"' not in user_message
    assert job["existing_memories"][0]["id"] in user_message


def test_the_profile_and_its_attributes_reach_the_extraction_and_monthly_prompts() -> None:
    """Seed 004: extraction (and the month's summary) read the profile's data, such as a birth chart,
    which memory.job_input puts under `profile`."""
    profile = {"name": "Me", "timezone": "Europe/Lisbon", "attributes": {"birth_chart": {"sun": "Leo"}}}
    month = {"kind": "summarize_month", "month_start": "2026-03-01", "profile": profile, "weeks_pending": 0,
             "weekly_summaries": []}
    for job in ({**extract_job("I live in Lisbon."), "profile": profile}, month):
        prompt = build_prompt(job)
        assert extract_job_input(prompt.messages[-1]["content"])["profile"] == profile
        assert "profile" in prompt.messages[0]["content"], "the rules say what the profile is for"


# --- extraction rules ---------------------------------------------------------------------------------

RULES = [
    ("I want to run a marathon next year.", "goal", "Wants to run a marathon next year"),
    ("I'd like to learn Spanish", "goal", "Wants to learn Spanish"),
    ("My goal is to read 20 books", "goal", "Wants to read 20 books"),
    ("I'm training for the Lisbon half marathon", "goal", "Is training for the Lisbon half marathon"),
    ("My sister is Ana.", "relationship", "Sister is called Ana"),
    ("my brother's called Tom", "relationship", "Brother is called Tom"),
    ("Maria is my wife", "relationship", "Wife is called Maria"),
    ("I love hiking and swimming", "preference", "Loves hiking and swimming"),
    ("I like jazz", "preference", "Likes jazz"),
    ("I prefer tea to coffee", "preference", "Prefers tea to coffee"),
    ("I hate mornings", "preference", "Hates mornings"),
    ("I always run before work", "pattern", "Always runs before work"),
    ("I usually go to the gym on Mondays", "pattern", "Usually goes to the gym on Mondays"),
    ("Every morning I run 5k", "pattern", "Runs 5k every morning"),
    ("I feel overwhelmed by work", "emotion", "Feels overwhelmed by work"),
    ("I'm feeling hopeful about the move", "emotion", "Feels hopeful about the move"),
    ("I decided to quit my job", "decision", "Decided to quit their job"),
    ("I've decided to adopt a dog", "decision", "Decided to adopt a dog"),
    ("I work on a compiler", "project", "Works on a compiler"),
    ("I'm building a treehouse for my kids", "project", "Is building a treehouse for their kids"),
    ("I am a nurse", "fact", "Is a nurse"),
    ("I'm a software engineer", "fact", "Is a software engineer"),
    ("I live in Lisbon", "fact", "Lives in Lisbon"),
    ("My name is Bob", "fact", "Is called Bob"),
]


@pytest.mark.parametrize(("message", "type_", "content"), RULES, ids=[r[0] for r in RULES])
def test_each_rule(llm: LLMClient, message: str, type_: str, content: str) -> None:
    (operation,) = ops(llm, message)
    assert operation["op"] == "add"
    assert (operation["type"], operation["content"]) == (type_, content)
    assert operation["confidence"] == (0.6 if type_ == "emotion" else 0.8)
    assert operation["context"] == {}


NOTHING = [
    "You're a great assistant, thanks!",
    "I love you",
    "I like your answers a lot",
    "Remind me at 3pm to call the plumber.",
    "I'm in a meeting now",
    "I want to go shopping tomorrow",
    "What should I eat tonight?",
    "How do I cook rice",
    "Can you help me plan my week",
    "Thank you so much",
    "Thanks!",
    "ok",
    "",
    "my sister is tired",
]


@pytest.mark.parametrize("message", NOTHING)
def test_nothing_for_opinions_logistics_questions_and_thanks(llm: LLMClient, message: str) -> None:
    assert ops(llm, message) == []


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("I was diagnosed with diabetes last year", "health"),
        ("I feel better since I started therapy", "health"),
        ("I take medication for my migraines", "health"),
        ("I want to pay off my student loan", "finance"),
        ("I decided to invest in index funds", "finance"),
        ("I hate talking about my salary", "finance"),
    ],
)
def test_medical_and_financial_claims_get_low_confidence(llm: LLMClient, message: str, category: str) -> None:
    (operation,) = ops(llm, message)
    assert operation["confidence"] == 0.3
    assert operation["category"] == category


def test_at_most_three_operations(llm: LLMClient) -> None:
    message = "I live in Porto. I love jazz. I want to travel. I am a teacher. I feel happy. I work on a novel."
    operations = ops(llm, message)
    assert [o["content"] for o in operations] == ["Lives in Porto", "Loves jazz", "Wants to travel"]


def test_several_memories_in_one_sentence(llm: LLMClient) -> None:
    operations = ops(llm, "I'm training for the half marathon and my sister Ana is running it too.")
    assert [(o["type"], o["content"]) for o in operations] == [
        ("goal", "Is training for the half marathon"),
        ("relationship", "Sister is called Ana"),
    ]


def test_a_contradiction_updates_the_existing_memory(llm: LLMClient) -> None:
    porto = memory("Lives in Porto")
    unrelated = memory("Loves jazz", "preference")

    (operation,) = ops(llm, "We finally moved, I live in Berlin now.", [unrelated, porto])

    assert operation == {
        "op": "update", "memory_id": porto["id"], "content": "Lives in Berlin", "type": "fact", "confidence": 0.8,
    }


def test_a_new_name_updates_the_relationship(llm: LLMClient) -> None:
    ana = memory("Sister is called Ana", "relationship")
    (operation,) = ops(llm, "My sister is Maria.", [ana])
    assert (operation["op"], operation["memory_id"], operation["content"]) == ("update", ana["id"], "Sister is called Maria")


def test_the_same_value_again_is_nothing_new(llm: LLMClient) -> None:
    assert ops(llm, "I live in Porto.", [memory("Lives in Porto")]) == []
    assert ops(llm, "I live in Porto.", [memory("The user lives in porto.")]) == []


def test_a_different_subject_is_added_not_updated(llm: LLMClient) -> None:
    (operation,) = ops(llm, "My name is Bob.", [memory("Sister is called Ana", "relationship")])
    assert operation["op"] == "add"


def test_forget_deletes_the_closest_memory(llm: LLMClient) -> None:
    porto, jazz = memory("Lives in Porto"), memory("Loves jazz", "preference")
    assert ops(llm, "Please forget that I live in Porto.", [jazz, porto]) == [{"op": "delete", "memory_id": porto["id"]}]
    assert ops(llm, "Please forget about the piano.", [jazz, porto]) == []


def test_existing_memories_without_a_uuid_are_ignored() -> None:
    assert extract_operations("I live in Berlin", [{"id": "m-1", "content": "Lives in Porto"}]) == [
        {"op": "add", "content": "Lives in Berlin", "type": "fact", "confidence": 0.8, "category": None, "context": []}
    ]


# --- summaries and titles -----------------------------------------------------------------------------


def turns(*users: str) -> list[dict[str, Any]]:
    return [{"turn_number": i, "user": u, "assistant": "Noted."} for i, u in enumerate(users, start=1)]


def test_conversation_summary_is_extractive_and_short(llm: LLMClient) -> None:
    job = {"kind": "summarize_conversation", "conversation_id": str(uuid.uuid4()),
           "turns": turns("I want to cook more. Any tips?", "I usually eat out. It is expensive.")}
    summary = run(llm, job).value

    assert isinstance(summary, ConversationSummaryOutput)
    assert summary.summary.startswith("Offline extractive summary of turns 1-2.")
    assert '"I want to cook more."' in summary.summary and '"I usually eat out."' in summary.summary
    assert "Any tips" not in summary.summary

    long = {"kind": "summarize_conversation", "turns": turns(*["word " * 60 + "end."] * 8)}
    assert len(run(llm, long).value.summary) <= 600  # ~150 tokens at 4 characters a token


@pytest.mark.parametrize(
    ("first", "title"),
    [
        ("how do I plan a trip to Japan in spring?", "How do I plan a trip"),
        ("Budget help!", "Budget help"),
        ("   ", "Untitled conversation"),
        ("?!", "Untitled conversation"),
        ("x" * 300, "X" + "x" * 79),
    ],
)
def test_titles(llm: LLMClient, first: str, title: str) -> None:
    result = run(llm, {"kind": "title", "conversation_id": str(uuid.uuid4()), "turns": turns(first, "later")})
    assert isinstance(result.value, TitleOutput)
    assert result.value.title == title


def test_weekly_summary(llm: LLMClient) -> None:
    job = {
        "kind": "summarize_week", "week_start": "2026-11-16", "time_zone": "Europe/Lisbon",
        "summaries": [
            "The user is stressed about the job search and the Berlin move.",
            "The user talked about the job search again, excited about Berlin.",
            "The user cooked dinner and felt calm about Berlin.",
        ],
    }
    value = run(llm, job).value

    assert isinstance(value, WeeklySummaryOutput)
    assert value.key_themes == ["berlin", "job", "search"]
    assert value.dominant_patterns == ["job search"]
    assert value.emotional_summary.startswith("Offline weekly summary (rule-based) for the week of 2026-11-16")
    assert "stressed (1)" in value.emotional_summary

    empty = run(llm, {**job, "summaries": []}).value
    assert (empty.key_themes, empty.dominant_patterns) == ([], [])


def test_monthly_summary(llm: LLMClient) -> None:
    job = {
        "kind": "summarize_month", "month_start": "2026-11-01", "weeks_pending": 1,
        "weekly_summaries": [
            {"week_start": "2026-11-02", "emotional_summary": "Stressed most days.", "key_themes": ["job search", "berlin"],
             "dominant_patterns": ["late nights"]},
            {"week_start": "2026-11-09", "emotional_summary": "Calmer.", "key_themes": ["berlin", "cooking"],
             "dominant_patterns": ["late nights"]},
        ],
    }
    value = run(llm, job).value

    assert isinstance(value, MonthlySummaryOutput)
    assert value.key_themes == ["berlin", "job search", "cooking"]
    assert value.context_dict() == {}
    assert "November 2026" in value.emotional_summary and "partial" in value.emotional_summary
    assert value.cognitive_summary.startswith("Rule-based note:")
    assert "late nights" in value.cognitive_summary


def test_year_comparison(llm: LLMClient) -> None:
    job = {
        "kind": "compare_year", "year": 2026, "month": 11,
        "months": [
            {"year": 2025, "emotional_summary": "-", "cognitive_summary": "-", "key_themes": ["job search", "porto"]},
            {"year": 2026, "emotional_summary": "-", "cognitive_summary": "-", "key_themes": ["berlin", "job search"]},
        ],
    }
    value = run(llm, job).value

    assert isinstance(value, YearComparisonOutput)
    assert "November 2025 and November 2026" in value.comparison
    assert "New this year: berlin." in value.comparison
    assert "Still present: job search." in value.comparison
    assert "Faded since last year: porto." in value.comparison

    alone = run(llm, {**job, "months": job["months"][1:]}).value.comparison
    assert "no monthly summary for November 2025" in alone and "nothing to compare" in alone


# --- properties ---------------------------------------------------------------------------------------

FRAGMENTS = [
    "I want to", "I'd like to", "my goal is", "I'm training for", "my sister is", "Ana is my friend",
    "I love", "I hate", "I prefer", "I always", "I usually", "every morning I", "I feel", "I'm feeling",
    "I decided to", "I work on", "I'm building", "I am a", "I live in", "my name is", "I moved to",
    "please forget that", "remind me", "tomorrow at 3", "you're great", "thanks", "my salary",
    "my medication", "Berlin", "Porto", "the marathon", "and my brother Tom", ",", ".", "?", "!", "\n",
    "é", "🙂", "```", '"', "'", "\\", "{", "}",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.one_of(
        st.text(max_size=400),
        st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=12), max_size=40).map(" ".join),
    ),
    existing=st.lists(
        st.sampled_from(["Lives in Porto", "Sister is called Ana", "Loves jazz", "Is called Bob", ""]), max_size=5
    ),
)
def test_any_user_text_gives_a_valid_extraction(llm: LLMClient, text: str, existing: list[str]) -> None:
    job = extract_job(text, [memory(content) for content in existing])
    result = run(llm, job)  # validated strictly by the client, and by the prompt's id check
    assert isinstance(result.value, ExtractionOutput)
    assert len(result.value.operations) <= 3
    ExtractionOutput.model_validate_json(json.dumps({"operations": extract_operations(text, job["existing_memories"])}),
                                         strict=True)


def test_the_few_shot_answers_are_valid_outputs() -> None:
    """The extraction prompt's example answers must themselves follow the schema they teach."""
    system = build_prompt(extract_job("x")).messages[0]["content"]
    answers = re.findall(r'^\{"operations": .*?\]\}$', system, flags=re.DOTALL | re.MULTILINE)
    assert len(answers) == 7
    for answer in answers:
        ExtractionOutput.model_validate_json(answer, strict=True)
    for forbidden in ("great assistant", "Remind me at 3pm", "in a meeting now", "medication", "loan"):
        assert forbidden in system


def test_a_conversation_gets_a_plain_answer_that_shows_what_it_was_told(llm: LLMClient) -> None:
    messages = [
        {"role": "system", "content": "You help.\n\n## What You Know About the User\n- Lives in Lisbon\n- Plays the cello\n"},
        {"role": "user", "content": "What should I do this weekend?"},
    ]
    answer = llm.answer(messages).value
    assert answer == llm.answer(messages).value, "deterministic"
    assert answer.startswith("(offline model) You said: What should I do this weekend?")
    assert "Lives in Lisbon; Plays the cello" in answer
    assert "remember" not in llm.answer(messages[1:]).value, "nothing known, nothing claimed"
