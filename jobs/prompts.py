"""Chat messages for each job kind, built from what `memory.job_input` returns.

Every prompt is a system message (the rules, and for extraction few-shot examples) and one user
message that carries the job input as a fenced JSON block. `embed_job_input` writes that block and
`extract_job_input` reads it back: the offline provider (`jobs.offline`) answers from it, so the
offline and the real provider see exactly the same request.

Only what the model needs is embedded: user ids and message ids stay out of the prompt (a hosted
provider has no use for them), existing memories keep their ids because update and delete name them.

    prompt = build_prompt(job_input)               # job_input: the JSON from memory.job_input
    completion = client.complete(prompt.messages, prompt.output, name=prompt.name, check=prompt.check)
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from jobs.schemas import (
    ConversationSummaryOutput,
    ExtractionOutput,
    MonthlySummaryOutput,
    TitleOutput,
    WeeklySummaryOutput,
    YearComparisonOutput,
)

__all__ = [
    "PROMPT_VERSION",
    "Prompt",
    "build_prompt",
    "embed_job_input",
    "extract_job_input",
    "extraction_messages",
    "conversation_summary_messages",
    "title_messages",
    "weekly_summary_messages",
    "monthly_summary_messages",
    "year_comparison_messages",
]

# Bumped whenever a prompt changes meaningfully; it is part of every schema name, so usage
# metrics (memory_private.jobs.usage) can be compared per prompt version.
PROMPT_VERSION = "v2"

Messages = list[dict[str, str]]

_FENCE_OPEN = "```json\n"
_FENCE_CLOSE = "\n```"
# json.dumps never writes a raw newline inside a string, so "\n```" cannot occur inside the block.
_BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)


def embed_job_input(job_input: Mapping[str, Any]) -> str:
    """The job input as a fenced JSON block (the one format `extract_job_input` reads)."""
    return _FENCE_OPEN + json.dumps(job_input, ensure_ascii=False, indent=2, default=str) + _FENCE_CLOSE


def extract_job_input(text: str) -> dict[str, Any]:
    """The last fenced JSON block of `text`, as an object. ValueError when there is none."""
    blocks = _BLOCK.findall(text or "")
    if not blocks:
        raise ValueError("no fenced ```json block in the message")
    value = json.loads(blocks[-1])
    if not isinstance(value, dict):
        raise ValueError("the fenced JSON block is not an object")
    return value


def _user(instruction: str, job_input: Mapping[str, Any]) -> dict[str, str]:
    return {"role": "user", "content": f"{instruction}\n\n{embed_job_input(job_input)}"}


def _system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text.strip()}


# --- extraction -----------------------------------------------------------------------------------

_EXTRACTION_SYSTEM = """
You maintain the long-term memory of a chat assistant about one user. You see ONE conversation turn:
the user's message, and the assistant's reply for context only. Decide what, if anything, is worth
remembering in future conversations, and answer with operations on the user's memories.

Rules
- 0 to 3 operations. Most turns deserve none (aim for about one memory per 5 to 20 turns); an empty
  list is a good answer.
- Remember only durable things the USER says about themselves. Types:
  goal (something they want to achieve), pattern (a recurring behaviour or tendency),
  relationship (a person in their life, with the name when given), decision (a choice they made),
  preference (how they like things), project (ongoing work), fact (a stable fact about them: where
  they live, their job, their name), entity (a named thing they refer to: a pet, a team, a place),
  emotion (a significant, lasting feeling, not a passing mood).
- Never remember: opinions about the assistant or the AI; ephemeral logistics (reminders, meeting
  times, what they are doing right now, today's plans); questions, greetings and thanks; anything
  only the assistant said; guesses about the user.
- Medical claims (diagnoses, medication, symptoms, therapy) and financial claims (salary, debt,
  loans, investments): skip them, or store them with confidence 0.3 or less and category "health"
  or "finance".
- Write each memory as one short third-person sentence without "The user"
  ("Wants to run a marathon in the spring", "Sister is called Anna"), in the user's language.
- confidence: 0.9 for explicit, stable statements; 0.7 for explicit ones that may change; 0.5 for
  things only implied; 0.3 or less for medical or financial claims.
- category: one or two lowercase words (work, family, health, finance, hobbies, ...) or null.
  context: key/value notes only when they matter (for example when a goal is due), else [].
- profile is who the memories are about: its name, time zone and attributes (data the app keeps
  for it, such as a birth chart). When a memory relates to that data, say how in context (for
  example {"key": "transits", "value": "Saturn return"}); never store the attributes themselves.
- existing_memories are the user's stored memories closest to this message. When the message
  contradicts or refines one, "update" it with its id instead of adding a conflicting memory. When
  the user retracts one or asks to forget it, "delete" it with its id. When it only repeats one,
  output nothing for it. Use only ids that appear in existing_memories.
- Answer with only the JSON object.

Examples (the input is shortened to what matters)

1. An opinion about the assistant: nothing to save.
user_message: "You're a great assistant, thanks for the help!"
{"operations": []}

2. Ephemeral logistics: nothing to save.
user_message: "Remind me at 3pm to call the plumber. I'm in a meeting now."
{"operations": []}

3. A goal and a relationship.
user_message: "I'm training for the Lisbon half marathon in March. My sister Ana is running it too."
{"operations": [
 {"op": "add", "content": "Is training for the Lisbon half marathon in March", "type": "goal",
  "confidence": 0.9, "category": "fitness", "context": [{"key": "due", "value": "March"}]},
 {"op": "add", "content": "Sister is called Ana and runs too", "type": "relationship",
  "confidence": 0.9, "category": "family", "context": []}]}

4. Medical and financial claims: skipped, or kept with low confidence.
user_message: "My doctor put me on new medication for anxiety, and my loan payments are stressing me out."
{"operations": [
 {"op": "add", "content": "Takes medication for anxiety", "type": "fact", "confidence": 0.3,
  "category": "health", "context": []}]}

5. A contradiction: update the existing memory instead of adding.
existing_memories: [{"id": "6f1c2d3e-0000-4000-8000-000000000001", "content": "Lives in Porto", "type": "fact"}]
user_message: "We finally moved, I live in Berlin now."
{"operations": [
 {"op": "update", "memory_id": "6f1c2d3e-0000-4000-8000-000000000001", "content": "Lives in Berlin",
  "type": null, "confidence": 0.9, "category": null}]}

6. A retraction: delete the existing memory.
existing_memories: [{"id": "6f1c2d3e-0000-4000-8000-000000000002", "content": "Wants to learn the piano", "type": "goal"}]
user_message: "Forget the piano thing, I've given up on it."
{"operations": [{"op": "delete", "memory_id": "6f1c2d3e-0000-4000-8000-000000000002"}]}

7. A repeat of an existing memory: nothing new.
existing_memories: [{"id": "6f1c2d3e-0000-4000-8000-000000000003", "content": "Prefers tea to coffee", "type": "preference"}]
user_message: "Tea for me, as always."
{"operations": []}
"""


def extraction_messages(job_input: Mapping[str, Any]) -> Messages:
    """Messages for the `extract` job."""
    data = {
        "kind": "extract",
        "mode": job_input.get("mode"),
        "profile": job_input.get("profile"),
        "user_message": job_input.get("user_message") or "",
        "assistant_message": job_input.get("assistant_message"),
        "existing_memories": [
            {"id": str(m.get("id")), "content": m.get("content"), "type": m.get("type")}
            for m in job_input.get("existing_memories") or []
        ],
    }
    return [
        _system(_EXTRACTION_SYSTEM),
        _user("Decide the memory operations for this turn.", data),
    ]


def _extraction_check(job_input: Mapping[str, Any]) -> Callable[[BaseModel], None]:
    """Update and delete may only name the existing memories the model was shown, each once.

    A made-up id would otherwise fail the whole memory.finish_extraction transaction (P0002), and
    a second operation on one memory too (the first supersedes or deletes it: 55000 or P0002),
    losing the answer's other operations; caught here, either becomes a corrective retry instead.
    """
    known = {str(m.get("id")) for m in job_input.get("existing_memories") or []}

    def check(value: BaseModel) -> None:
        assert isinstance(value, ExtractionOutput)
        named = Counter(str(i) for i in value.memory_ids())
        unknown = sorted(i for i in named if i not in known)
        if unknown:
            raise ValueError(
                f"memory_id {', '.join(unknown)} is not one of the existing_memories ids; "
                "update or delete only the memories listed in the input"
            )
        repeated = sorted(i for i, n in named.items() if n > 1)
        if repeated:
            raise ValueError(
                f"memory_id {', '.join(repeated)} is named by more than one operation; "
                "update or delete each existing memory at most once"
            )

    return check


# --- conversation summary and title ----------------------------------------------------------------

_SUMMARY_SYSTEM = """
You summarise a span of a conversation between a user and a chat assistant, so that later turns
and later weekly summaries can rely on it instead of the full text.

- 100 to 200 tokens (about 75 to 150 words), one paragraph, in the user's language. Shorter only
  when the turns hold too little to fill it: never invent anything.
- Cover what the user talked about, how they felt, what they decided or plan, and open questions.
  Mention the assistant's answers only where they matter to the user's next steps.
- Refer to the user as "the user". No lists, no headings.
- Answer with only the JSON object.
"""

_TITLE_SYSTEM = """
You write a title for a conversation from its first turn.

- 2 to 6 words, at most 80 characters, in the user's language, saying what the conversation is about.
- No quotes, no emoji, no trailing punctuation, no "Conversation about".
- Answer with only the JSON object.
"""


def _turns(job_input: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {"turn_number": t.get("turn_number"), "user": t.get("user"), "assistant": t.get("assistant")}
        for t in job_input.get("turns") or []
    ]


def conversation_summary_messages(job_input: Mapping[str, Any]) -> Messages:
    """Messages for the `summarize_conversation` job (seed 004's 4-turn summary)."""
    data = {"kind": "summarize_conversation", "turns": _turns(job_input)}
    return [_system(_SUMMARY_SYSTEM), _user("Summarise these turns.", data)]


def title_messages(job_input: Mapping[str, Any]) -> Messages:
    """Messages for the `title` job."""
    data = {"kind": "title", "turns": _turns(job_input)[:1]}
    return [_system(_TITLE_SYSTEM), _user("Write the title.", data)]


# --- weekly, monthly, yearly -------------------------------------------------------------------------

_WEEKLY_SYSTEM = """
You write a user's weekly summary from the summaries of their conversations that week.

- emotional_summary: 3 to 6 sentences on the dominant emotional patterns of the week and how the
  user's energy shifted through it. Factual and kind; no diagnoses.
- key_themes: at most 5 themes or concerns, a few words each, most important first.
- dominant_patterns: at most 5 recurring behaviours or tendencies seen more than once; [] if none.
- Use only what the summaries say. With no summaries, say so briefly and leave the lists empty.
- When summaries_left_out is above 0 the week's first conversations did not fit: the summaries
  are its later ones, so say the week is seen from those.
- Refer to the user as "the user". Answer with only the JSON object.
"""

_MONTHLY_SYSTEM = """
You write a user's monthly summary from their weekly summaries.

- emotional_summary: 3 to 6 sentences on the month's emotional arc: what dominated, what changed.
- cognitive_summary: 2 to 5 sentences on how the user thought: focus, reasoning, decisions,
  recurring concerns.
- key_themes: at most 5 themes of the month, a few words each, most important first.
- context: key/value pairs for circumstances worth keeping (a move, a new job, exam season) and,
  when the profile's attributes hold such data (a birth chart), the month's dominant influences
  on it (for example dominant transits, planetary influences); [] if none.
- When weeks_pending is above 0 the month is partial: say so in the emotional summary.
- Use only what the weekly summaries say. Refer to the user as "the user".
- Answer with only the JSON object.
"""

_YEAR_SYSTEM = """
You compare the same month of two consecutive years for one user, from the two monthly summaries,
to show growth and evolution.

- comparison: 4 to 8 sentences addressed to the user ("you"): what is new this year, what stayed,
  what faded, how the emotional tone and the way of thinking changed. Factual and encouraging; no
  diagnoses, no advice they did not ask for.
- When one of the two years is missing, say there is nothing to compare yet and describe the month
  that exists in one or two sentences.
- Answer with only the JSON object.
"""


def weekly_summary_messages(job_input: Mapping[str, Any]) -> Messages:
    """Messages for the `summarize_week` job."""
    data = {
        "kind": "summarize_week",
        "week_start": job_input.get("week_start"),
        "time_zone": job_input.get("time_zone"),
        "summaries": list(job_input.get("summaries") or []),
        "summaries_left_out": job_input.get("summaries_left_out") or 0,
    }
    return [_system(_WEEKLY_SYSTEM), _user("Write the weekly summary.", data)]


def monthly_summary_messages(job_input: Mapping[str, Any]) -> Messages:
    """Messages for the `summarize_month` job."""
    data = {
        "kind": "summarize_month",
        "month_start": job_input.get("month_start"),
        "profile": job_input.get("profile"),
        "weeks_pending": job_input.get("weeks_pending") or 0,
        "weekly_summaries": list(job_input.get("weekly_summaries") or []),
    }
    return [_system(_MONTHLY_SYSTEM), _user("Write the monthly summary.", data)]


def year_comparison_messages(job_input: Mapping[str, Any]) -> Messages:
    """Messages for the `compare_year` job."""
    data = {
        "kind": "compare_year",
        "year": job_input.get("year"),
        "month": job_input.get("month"),
        "months": list(job_input.get("months") or []),
    }
    return [_system(_YEAR_SYSTEM), _user("Compare the two months.", data)]


# --- dispatch -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """Everything `LLMClient.complete` needs for one job."""

    kind: str
    name: str  # the json_schema name: supamem_<kind>_<version>
    messages: Messages
    output: type[BaseModel]
    check: Callable[[BaseModel], None] | None = None


_BUILDERS: dict[str, tuple[Callable[[Mapping[str, Any]], Messages], type[BaseModel]]] = {
    "extract": (extraction_messages, ExtractionOutput),
    "summarize_conversation": (conversation_summary_messages, ConversationSummaryOutput),
    "title": (title_messages, TitleOutput),
    "summarize_week": (weekly_summary_messages, WeeklySummaryOutput),
    "summarize_month": (monthly_summary_messages, MonthlySummaryOutput),
    "compare_year": (year_comparison_messages, YearComparisonOutput),
}


def build_prompt(job_input: Mapping[str, Any]) -> Prompt:
    """The prompt for a `memory.job_input` result, by its `kind`. ValueError for an unknown kind."""
    kind = job_input.get("kind")
    if kind not in _BUILDERS:
        raise ValueError(f"unknown job kind {kind!r}; expected one of {', '.join(_BUILDERS)}")
    build, output = _BUILDERS[kind]
    return Prompt(
        kind=kind,
        name=f"supamem_{kind}_{PROMPT_VERSION}",
        messages=build(job_input),
        output=output,
        check=_extraction_check(job_input) if kind == "extract" else None,
    )

