"""The offline provider: deterministic, rule-based answers with no network (the default provider).

It is a transport like `jobs.llm.HTTPTransport`: `OfflineProvider.chat(payload)` takes the same
chat-completions payload and returns a response in OpenAI's shape (model `supamem-offline`, no
`usage`, so the client estimates it and marks it `estimated`). It reads the job input from the
fenced JSON block that `jobs.prompts` embeds in the user message, so `make demo` and the tests run
anywhere while going through exactly the client code a real model goes through.

Nothing here is clever, and nothing pretends to be: every text it writes says it is an offline,
rule-based result. The rules:

- extract: simple English patterns on the USER message only, clause by clause ("I want to X" ->
  goal "Wants to X", "my sister is Ana" -> relationship "Sister is called Ana", "I love X" ->
  preference, "I usually X" -> pattern, "I feel X" -> emotion, "I decided to X" -> decision,
  "I'm building X" -> project, "I live in X" / "I moved to X" / "I'm a X" / "my name is X" /
  "I have X" / "I take X" / "I was diagnosed with X" -> fact, "forget that X" -> delete of the
  closest existing memory). Nothing for questions, thanks, anything addressed to the
  assistant, or logistics (reminders, times, "tomorrow", "in a meeting"). Medical and financial
  claims (judged on the whole sentence) get confidence 0.3 and category health / finance;
  emotions 0.6, everything else 0.8. At most 3 operations. What an existing memory already says
  is not added again; a memory with the same subject as an existing one but another value
  ("Lives in Porto" -> "Lives in Berlin", "is called X" -> "is called Y") updates it instead.
- summarize_conversation: the first sentence of each user message, joined, trimmed to ~150 tokens.
- title: the first user message's first 6 words, capitalised, without trailing punctuation.
- summarize_week / summarize_month: the most frequent content words as themes, repeated word pairs
  as patterns, and a fixed template; compare_year: which themes are new, stayed or faded.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import date
from typing import Any

from jobs.prompts import extract_job_input

__all__ = [
    "OFFLINE_MODEL",
    "OfflineProvider",
    "extract_operations",
    "summarize_turns",
    "title_for",
    "weekly_summary",
    "monthly_summary",
    "year_comparison",
]

OFFLINE_MODEL = "supamem-offline"
MAX_OPERATIONS = 3
SUMMARY_TOKENS = 150  # estimated as characters / 4, like the client's usage estimate


class OfflineProvider:
    """A `jobs.llm.Transport` that computes the answer instead of asking a model."""

    provider = "offline"
    model = OFFLINE_MODEL

    def chat(self, payload: dict[str, Any]) -> dict[str, Any]:
        job = _job_input(payload.get("messages") or [])
        if job is None and "response_format" not in payload:  # a conversation, not a job: plain text
            return _response(payload, content=reply_to(payload.get("messages") or []))
        if job is None:
            return _response(payload, refusal="offline provider: no fenced JSON job input in the user messages")
        handler = _HANDLERS.get(job.get("kind"))  # type: ignore[arg-type]
        if handler is None:
            return _response(payload, refusal=f"offline provider: unknown job kind {job.get('kind')!r}")
        return _response(payload, content=json.dumps(handler(job), ensure_ascii=False))

    def stream(self, payload: dict[str, Any]) -> Iterator[str]:
        """The plain-text answer word by word, as a model's stream would give it."""
        content = self.chat(payload)["choices"][0]["message"]["content"] or ""
        yield from re.findall(r"\s*\S+\s*", content) or [content]

    def close(self) -> None:
        pass


def reply_to(messages: Sequence[Mapping[str, Any]]) -> str:
    """A deterministic chat answer: the question echoed, and what the system prompt says the
    assistant knows about the user (its "- " lines), so a demo shows memory at work."""
    question = next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), "")
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    known = [line[2:].strip() for line in system.splitlines() if line.startswith("- ")]
    answer = f"(offline model) You said: {_clip(_normalize(question), 200)}"
    if known:
        answer += " What I remember about you: " + "; ".join(_clip(k, 120) for k in known[:3]) + "."
    return answer


def _job_input(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The job input of the last user message that has one (a corrective follow-up has none)."""
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            try:
                return extract_job_input(message["content"])
            except ValueError:
                continue
    return None


def _response(payload: Mapping[str, Any], *, content: str | None = None, refusal: str | None = None) -> dict[str, Any]:
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:24]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return {
        "id": f"offline-{digest}",
        "object": "chat.completion",
        "created": 0,
        "model": OFFLINE_MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


# --- text helpers -----------------------------------------------------------------------------------------


def _normalize(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split())


_SENTENCES = re.compile(r"(?<=[.!?])\s+|\s*[;\n]\s*")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s and s.strip()]


def _first_sentence(text: str, limit: int = 200) -> str:
    sentences = _sentences(_normalize(text or ""))
    return _clip(sentences[0], limit) if sentences else ""


def _clip(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters."""
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut[:limit].rstrip(" ,;:-")


_TRAILING = " \t.,;:!?-\u2013\u2014\"'()[]{}\u2026"


# --- extraction ---------------------------------------------------------------------------------------------

# A clause starts again after a conjunction followed by a new subject: "..., and my sister ...".
_CLAUSES = re.compile(
    r",?\s+(?:and|but|because|so|although|though|while|whereas|since)\s+(?=(?:i|i'm|i've|i'd|my|we|he|she|they)\b)"
    r"|,\s+(?=(?:i|i'm|i've|my)\b)",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^(?:(?:hi|hello|hey|ok|okay|so|well|also|and|but|oh|anyway|btw|actually)\b[,!]?\s*)+", re.I)

_QUESTION = re.compile(
    r"^(?:what|how|why|when|where|who|whom|which|whose|can|could|would|should|shall|do|does|did|is|are|am|"
    r"will|was|were|have|has|may|might)\b",
    re.I,
)
_THANKS = re.compile(r"\b(?:thanks|thank|thx|ty|cheers|appreciate it)\b", re.I)
# Anything addressed to the assistant is an opinion about it or a request to it, not a memory.
_ASSISTANT = re.compile(
    r"\b(?:you|your|you're|youre|yours|yourself|u|assistant|chatbot|chatgpt|bot|the ai)\b", re.I
)
_HABIT = re.compile(r"\b(?:every|always|usually|often|normally|typically|never)\b", re.I)
_LOGISTICS = re.compile(
    r"\b(?:remind(?:er)?|tomorrow|today|tonight|yesterday|right now|at the moment|this (?:morning|afternoon|evening|week)|"
    r"in a meeting|on my way|be right back|brb|next (?:week|month|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|in \d+ (?:minutes?|mins?|hours?|days?))\b",
    re.I,
)
_CLOCK = re.compile(r"\b(?:at|by|around|until|before|after)\s+\d{1,2}(?::\d{2})?\b|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b", re.I)

_MEDICAL = re.compile(
    r"\b(?:diagnos\w*|medication\w*|medicine\w*|meds|symptom\w*|therap\w*|prescri\w*|doctor\w*|illness\w*|"
    r"disease\w*|disorder\w*|depress\w*|anxiety|adhd|cancer|diabetes|surgery|pills?|antidepressant\w*|"
    r"chemo\w*|insulin|migraine\w*)\b",
    re.I,
)
_FINANCIAL = re.compile(
    r"\b(?:salary|salaries|debts?|loans?|invest\w*|mortgage\w*|income|savings|bankrupt\w*|credit|stocks?|"
    r"crypto\w*|bitcoin|tax|taxes|paycheck\w*|wages?|owe|owes|owed)\b",
    re.I,
)

_RELATIONS = (
    r"best friend|sister|brother|mother|mom|mum|father|dad|wife|husband|partner|friend|son|daughter|"
    r"boyfriend|girlfriend|fiancee|fiance|grandmother|grandfather|grandma|grandpa|aunt|uncle|cousin|boss"
)
# The name is case-sensitive (a capitalised word), the rest is not: "my sister is tired" is no name.
_NAME = r"(?P<name>[A-Z][\w'-]*)"
_NOT_NAMES = {"I", "A", "An", "The", "My", "He", "She", "They", "It", "This", "That", "Not", "So", "Very",
              "Really", "Also", "Always", "Still", "Just", "Now", "Here", "There", "And", "But", "Or"}
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_EVERY = rf"every\s+(?:morning|evening|night|day|weekend|week|month|{_WEEKDAYS})"

X = r"(?P<x>.+)"


def _rule(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# (type, pattern, template). Tried in order; the first match of a clause wins. Patterns are
# case-insensitive except the names in relationships. {x} is the rest of the clause, {verb}/{adv}/
# {when}/{rel}/{name} the named groups; {X} is {x} with its first verb in the third person.
_RULES: list[tuple[str, re.Pattern[str], str]] = [
    ("relationship", _rule(rf"(?i:\bmy\s+(?P<rel>{_RELATIONS})(?:'s|\s+is)\s+(?:called\s+|named\s+)?){_NAME}"), "{Rel} is called {name}"),
    ("relationship", _rule(rf"{_NAME}\s+(?i:is\s+my\s+(?P<rel>{_RELATIONS}))\b"), "{Rel} is called {name}"),
    ("relationship", _rule(rf"(?i:\bmy\s+(?P<rel>{_RELATIONS})),?\s+{_NAME}\b"), "{Rel} is called {name}"),
    ("goal", _rule(rf"(?i:\bi(?:\s+(?:really\s+)?(?:want|wanna|would like|would love|hope|plan)|'d\s+(?:really\s+)?(?:like|love))\s+to\s+{X})"), "Wants to {x}"),
    ("goal", _rule(rf"(?i:\bmy\s+(?:main\s+|big\s+)?goal\s+is\s+to\s+{X})"), "Wants to {x}"),
    ("goal", _rule(rf"(?i:\bmy\s+(?:main\s+|big\s+)?goal\s+is\s+{X})"), "Has the goal: {x}"),
    ("goal", _rule(rf"(?i:\bi(?:'m|\s+am)\s+training\s+for\s+{X})"), "Is training for {x}"),
    ("preference", _rule(rf"(?i:\bi\s+(?:really\s+|absolutely\s+|just\s+)?(?P<verb>love|like|prefer|hate|enjoy|dislike|adore|can't stand|cannot stand)\s+{X})"), "{Verb} {x}"),
    ("pattern", _rule(rf"(?i:\b(?P<when>{_EVERY}),?\s+i\s+{X})"), "{X} {when}"),
    ("pattern", _rule(rf"(?i:\bi\s+(?P<adv>always|usually|often|normally|typically|never|tend to)\s+{X})"), "{Adv} {X}"),
    ("pattern", _rule(rf"(?i:\bi\s+(?P<x>(?!.*\b(?:want|like|love)\b).+?)\s+(?P<when>{_EVERY})\b)"), "{X} {when}"),
    ("emotion", _rule(rf"(?i:\bi(?:'m|\s+am|'ve\s+been|\s+have\s+been)\s+feeling\s+{X})"), "Feels {x}"),
    ("emotion", _rule(rf"(?i:\bi\s+feel\s+{X})"), "Feels {x}"),
    ("decision", _rule(rf"(?i:\bi(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?decided\s+{X})"), "Decided {x}"),
    ("project", _rule(rf"(?i:\bi(?:'m|\s+am)\s+(?:currently\s+|now\s+)?(?P<verb>building|working on|writing|developing|making)\s+{X})"), "Is {verb} {x}"),
    ("project", _rule(rf"(?i:\bi\s+work\s+on\s+{X})"), "Works on {x}"),
    ("fact", _rule(rf"(?i:\bmy\s+name\s+is\s+{X})"), "Is called {x}"),
    ("fact", _rule(rf"(?i:\bi(?:'m|\s+am)\s+called\s+{X})"), "Is called {x}"),
    ("fact", _rule(rf"(?i:\bi\s+live\s+in\s+{X})"), "Lives in {x}"),
    ("fact", _rule(rf"(?i:\bi(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?moved\s+to\s+{X})"), "Lives in {x}"),
    ("fact", _rule(rf"(?i:\bi(?:'m|\s+am)\s+from\s+{X})"), "Is from {x}"),
    ("fact", _rule(r"(?i:\bi\s+work\s+as\s+(?P<x>an?\s+.+))"), "Works as {x}"),
    ("fact", _rule(rf"(?i:\bi(?:'ve|\s+have|\s+was)?\s+(?:been\s+)?diagnosed\s+with\s+{X})"), "Was diagnosed with {x}"),
    ("fact", _rule(rf"(?i:\bi\s+(?:have|have got|'ve got)\s+(?!to\b|been\b|no\b|never\b|always\b|just\b|got\b){X})"), "Has {x}"),
    ("fact", _rule(rf"(?i:\bi\s+take\s+{X})"), "Takes {x}"),
    ("fact", _rule(r"(?i:\bi(?:'m|\s+am)\s+(?P<x>an?\s+(?!bit\b|little\b|lot\b).+))"), "Is {x}"),
]
_FORGET = re.compile(rf"(?i:\b(?:please\s+)?forget\s+(?:that|about)\s+{X})")

_PRONOUNS = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs", "i'm": "they're", "i": "they"}
_IRREGULAR = {"am": "is", "'m": "is", "be": "is", "have": "has", "do": "does", "go": "goes"}

# Subjects whose value can only be one thing at a time; a new value updates the old memory.
_SUBJECT = re.compile(r"^(?P<subject>.*?\b(?:is called|lives in|is from|works as))\s+(?P<value>.+)$", re.I)


def _third_person(phrase: str) -> str:
    """'run 5k before work' -> 'runs 5k before work' (first word only; plain rules)."""
    first, _, rest = phrase.partition(" ")
    lower = first.lower()
    if not lower.isalpha() or lower.endswith("ly") or lower in ("never", "always"):
        word = first
    elif lower in _IRREGULAR:
        word = _IRREGULAR[lower]
    elif lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        word = first + "es"
    elif len(lower) > 1 and lower.endswith("y") and lower[-2] not in "aeiou":
        word = first[:-1] + "ies"
    else:
        word = first + "s"
    return f"{word} {rest}".strip()


_TRAILING_ADVERBS = re.compile(r"(?:\s+(?:now|these days|nowadays|anymore|any more|as well|again))+$", re.I)


def _value(raw: str) -> str:
    """The captured rest of a clause, in the third person, without trailing "now" and the like."""
    words = [_PRONOUNS.get(w.lower(), w) for w in raw.split()]
    value = _clip(" ".join(words), 200).strip(_TRAILING)
    return _TRAILING_ADVERBS.sub("", value).strip(_TRAILING)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


MAX_MESSAGE_CHARS = 10_000  # beyond this, nobody is telling us a fact about themselves
MAX_CLAUSE_CHARS = 300  # keeps the patterns' backtracking bounded on pathological input


def _clauses(sentence: str) -> list[str]:
    return [c.strip()[:MAX_CLAUSE_CHARS] for c in _CLAUSES.split(sentence) if c and c.strip()]


def _skippable(clause: str) -> bool:
    if _THANKS.search(clause) or _ASSISTANT.search(clause):
        return True
    if _LOGISTICS.search(clause):
        return True
    return bool(_CLOCK.search(clause)) and not _HABIT.search(clause)


def _candidate(clause: str) -> tuple[str, str] | None:
    """(type, content) for the first rule the clause matches."""
    for kind, pattern, template in _RULES:
        match = pattern.search(clause)
        if match is None:
            continue
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        if "name" in groups and groups["name"] in _NOT_NAMES:
            continue
        x = _value(groups.get("x", ""))
        if "x" in groups and not x:
            continue
        content = template.format(
            x=x,
            X=_third_person(x),
            name=groups.get("name", ""),
            rel=groups.get("rel", "").lower(),
            Rel=_capital(" ".join(groups.get("rel", "").lower().split())),
            verb=groups.get("verb", "").lower(),
            Verb=_verb(groups.get("verb", "")),
            Adv=_adv(groups.get("adv", "")),
            when=" ".join(groups.get("when", "").lower().split()),
        )
        content = _capital(_clip(" ".join(content.split()), 500).strip(_TRAILING))
        if content:
            return kind, content
    return None


def _verb(verb: str) -> str:
    verb = " ".join(verb.lower().split())
    if verb in ("can't stand", "cannot stand"):
        return "Can't stand"
    return _capital(_third_person(verb))


def _adv(adv: str) -> str:
    adv = " ".join(adv.lower().split())
    return "Tends to" if adv == "tend to" else _capital(adv)


def _key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _subject_value(content: str) -> tuple[str, str] | None:
    text = re.sub(r"^(?:the\s+)?user\s+", "", content.strip(), flags=re.I)
    match = _SUBJECT.match(text)
    if match is None:
        return None
    value = re.sub(r"^(?:a|an|the)\s+", "", _key(match.group("value")))
    return _key(match.group("subject")), value


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _content_words(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _STOPWORDS and len(w) > 1}


def _closest(text: str, memories: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The existing memory sharing at least half of `text`'s content words, best first."""
    words = _content_words(text)
    if not words:
        return None
    best, best_score = None, 0.0
    for memory in memories:
        score = len(words & _content_words(str(memory.get("content") or ""))) / len(words)
        if score >= 0.5 and score > best_score:
            best, best_score = memory, score
    return best


def _existing(job_memories: Iterable[Any]) -> list[dict[str, Any]]:
    """The existing memories that can be named: those with a real uuid."""
    result = []
    for memory in job_memories or []:
        if not isinstance(memory, Mapping):
            continue
        try:
            memory_id = str(uuid.UUID(str(memory.get("id"))))
        except ValueError:
            continue
        result.append({"id": memory_id, "content": str(memory.get("content") or ""), "type": memory.get("type")})
    return result


def extract_operations(user_message: str, existing_memories: Iterable[Any] = ()) -> list[dict[str, Any]]:
    """The extraction operations (ExtractionOutput's shape) for one user message; see the module doc."""
    existing = _existing(existing_memories)
    known = {_key(m["content"]) for m in existing}
    touched: set[str] = set()
    operations: list[dict[str, Any]] = []
    seen: set[str] = set()
    for sentence in _sentences(_normalize((user_message or "")[:MAX_MESSAGE_CHARS])):
        if sentence.endswith("?") or _QUESTION.match(_LEADING.sub("", sentence)):
            continue
        for clause in _clauses(sentence):
            if len(operations) >= MAX_OPERATIONS:
                return operations
            clause = _LEADING.sub("", clause).strip()
            forget = _FORGET.search(clause)
            if forget is not None:
                target = _closest(forget.group("x"), [m for m in existing if m["id"] not in touched])
                if target is not None:
                    touched.add(target["id"])
                    operations.append({"op": "delete", "memory_id": target["id"]})
                continue
            if not clause or _skippable(clause):
                continue
            found = _candidate(clause)
            if found is None:
                continue
            kind, content = found
            key = _key(content)
            if key in seen or key in known:  # said twice, or already remembered: nothing new
                continue
            seen.add(key)
            # The whole sentence decides: "I feel better since I started therapy" is a medical claim.
            category = "health" if _MEDICAL.search(sentence) else "finance" if _FINANCIAL.search(sentence) else None
            confidence = 0.3 if category else 0.6 if kind == "emotion" else 0.8
            operation = _add_or_update(kind, content, confidence, category, existing, touched)
            if operation is not None:
                operations.append(operation)
    return operations


def _add_or_update(
    kind: str,
    content: str,
    confidence: float,
    category: str | None,
    existing: Sequence[Mapping[str, Any]],
    touched: set[str],
) -> dict[str, Any] | None:
    """An add; an update when an existing memory has the same subject and another value; None
    when one already says the same ("The user lives in Porto." vs "Lives in Porto")."""
    new = _subject_value(content)
    if new is not None:
        if any(_subject_value(memory["content"]) == new for memory in existing):
            return None
        for memory in existing:
            old = _subject_value(memory["content"])
            if old is not None and old[0] == new[0] and memory["id"] not in touched:
                touched.add(memory["id"])
                return {
                    "op": "update",
                    "memory_id": memory["id"],
                    "content": content,
                    "type": kind,
                    "confidence": confidence,
                    "category": category,
                }
    return {"op": "add", "content": content, "type": kind, "confidence": confidence, "category": category, "context": []}


def _extract(job: Mapping[str, Any]) -> dict[str, Any]:
    return {"operations": extract_operations(str(job.get("user_message") or ""), job.get("existing_memories") or [])}


# --- conversation summary and title --------------------------------------------------------------------------


def _turn_list(job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in job.get("turns") or [] if isinstance(t, Mapping)]


def summarize_turns(turns: Sequence[Mapping[str, Any]]) -> str:
    """An extractive summary: the first sentence of each user message, about 150 tokens at most."""
    numbers = [t.get("turn_number") for t in turns if isinstance(t.get("turn_number"), int)]
    span = f"turns {min(numbers)}-{max(numbers)}" if numbers else "the conversation"
    firsts = [s for s in (_first_sentence(str(t.get("user") or "")) for t in turns) if s]
    if not firsts:
        return f"Offline extractive summary of {span}: the user wrote nothing to summarise."
    text = f"Offline extractive summary of {span}. The user wrote: " + " ".join(f'"{s}"' for s in firsts)
    limit = SUMMARY_TOKENS * 4
    return text if len(text) <= limit else _clip(text, limit - 4) + " ..."


def title_for(turns: Sequence[Mapping[str, Any]]) -> str:
    """The first user message's first 6 words, capitalised, no trailing punctuation (<= 80 chars)."""
    first = next((str(t.get("user") or "") for t in turns if str(t.get("user") or "").strip()), "")
    words = _normalize(first).split()[:6]
    title = _clip(" ".join(words), 80).strip(_TRAILING)
    return _capital(title) if title else "Untitled conversation"


# --- weekly, monthly, yearly -----------------------------------------------------------------------------------

_STOPWORDS = set(
    """
    a about above after again against all also am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each even ever every few for from further get gets getting got had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in
    into is isn't it it's its itself just let's like lot lots me more most much mustn't my myself no nor not
    now of off on once only or other ought our ours ourselves out over own really same shan't she she'd she'll
    she's should shouldn't so some still such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've thing things this those through to too under until up
    us very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
    while who who's whom why why's will with won't would wouldn't yes yet you you'd you'll you're you've your
    yours yourself yourselves one two three want wants wanted said says say going went make made way well
    back also maybe something anything nothing everything time times day days lot kind sort bit
    offline extractive summary summaries rule-based rule based turn turns user user's users wrote weekly
    monthly week weeks month months conversation conversations frequent words word feeling feelings mentioned
    none themes theme recurring patterns pattern built pending partial note attention centred repeated
    feel feels felt talked talk talks
    """.split()
)
_EMOTIONS = set(
    """
    happy happier sad sadder stressed stress anxious anxiety tired exhausted excited calm angry worried
    frustrated lonely grateful hopeful overwhelmed proud nervous relaxed motivated confident bored content
    upset scared afraid joy joyful hopeless energised energized drained optimistic curious fulfilled restless
    """.split()
)


def _tokens(text: str) -> list[str]:
    return [w.strip("'-") for w in re.findall(r"[a-z][a-z'-]*", text.lower())]


def _content(tokens: Iterable[str]) -> list[str]:
    return [t for t in tokens if len(t) >= 3 and t not in _STOPWORDS and not t.endswith("'s")]


def _ranked(counter: Counter[str], order: Mapping[str, int], limit: int) -> list[str]:
    """Most frequent first; ties by first appearance, so the result is deterministic."""
    return [w for w, _ in sorted(counter.items(), key=lambda kv: (-kv[1], order[kv[0]]))][:limit]


def _count(words: Iterable[str], counter: Counter[str], order: dict[str, int], weight: int = 1) -> None:
    for word in words:
        counter[word] += weight
        order.setdefault(word, len(order))


def _repeated_pairs(texts: Iterable[str], limit: int = 2) -> list[str]:
    """Word pairs (both content words, adjacent) seen at least twice across `texts`."""
    counter: Counter[str] = Counter()
    order: dict[str, int] = {}
    for text in texts:
        tokens = _tokens(text)
        pairs = [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False) if a != b and _content([a]) and _content([b])]
        _count(pairs, counter, order)
    return [p for p in _ranked(counter, order, limit * 10) if counter[p] >= 2][:limit]


def _listing(items: Sequence[str], empty: str = "none") -> str:
    return ", ".join(items) if items else empty


def _emotion_words(texts: Iterable[str]) -> list[str]:
    counter: Counter[str] = Counter()
    order: dict[str, int] = {}
    for text in texts:
        _count((t for t in _tokens(text) if t in _EMOTIONS), counter, order)
    return [f"{w} ({counter[w]})" for w in _ranked(counter, order, 5)]


def weekly_summary(job: Mapping[str, Any]) -> dict[str, Any]:
    """WeeklySummaryOutput's shape from a `summarize_week` job input."""
    summaries = [str(s) for s in job.get("summaries") or [] if isinstance(s, str) and s.strip()]
    week = job.get("week_start") or "this week"
    if not summaries:
        return {
            "emotional_summary": f"Offline weekly summary (rule-based) for the week of {week}: no conversation summaries.",
            "key_themes": [],
            "dominant_patterns": [],
        }
    counter: Counter[str] = Counter()
    order: dict[str, int] = {}
    for text in summaries:
        _count(_content(_tokens(text)), counter, order)
    top = _ranked(counter, order, 5)
    return {
        "emotional_summary": (
            f"Offline weekly summary (rule-based) for the week of {week}: {len(summaries)} conversation "
            f"summaries. Most frequent words: {_listing(top)}. "
            f"Feeling words mentioned: {_listing(_emotion_words(summaries))}."
        ),
        "key_themes": top[:3],
        "dominant_patterns": _repeated_pairs(summaries),
    }


def _month_label(value: Any) -> str:
    try:
        day = date.fromisoformat(str(value))
    except ValueError:
        return str(value or "this month")
    return f"{calendar.month_name[day.month]} {day.year}"


def monthly_summary(job: Mapping[str, Any]) -> dict[str, Any]:
    """MonthlySummaryOutput's shape from a `summarize_month` job input."""
    weeks = [w for w in job.get("weekly_summaries") or [] if isinstance(w, Mapping)]
    label = _month_label(job.get("month_start"))
    pending = job.get("weeks_pending") or 0
    partial = f"; {pending} more week(s) still pending, so the month is partial" if pending else ""
    if not weeks:
        return {
            "emotional_summary": f"Offline monthly summary (rule-based) for {label}: no weekly summaries yet{partial}.",
            "cognitive_summary": "Rule-based note: nothing to summarise yet.",
            "key_themes": [],
            "context": [],
        }
    counter: Counter[str] = Counter()
    order: dict[str, int] = {}
    patterns: Counter[str] = Counter()
    pattern_order: dict[str, int] = {}
    emotional_texts = []
    for week in weeks:
        themes = [" ".join(str(t).lower().split()) for t in week.get("key_themes") or [] if str(t).strip()]
        _count(themes, counter, order, weight=2)
        text = str(week.get("emotional_summary") or "")
        emotional_texts.append(text)
        _count(_content(_tokens(text)), counter, order)
        _count((" ".join(str(p).lower().split()) for p in week.get("dominant_patterns") or [] if str(p).strip()),
               patterns, pattern_order)
    top = [_clip(t, 100) for t in _ranked(counter, order, 3)]
    repeated = _ranked(patterns, pattern_order, 2)
    cognitive = f"Rule-based note: attention this month centred on {_listing(top, 'no clear theme')}."
    if repeated:
        cognitive += f" Repeated patterns: {'; '.join(repeated)}."
    return {
        "emotional_summary": (
            f"Offline monthly summary (rule-based) for {label}: built from {len(weeks)} weekly "
            f"summaries{partial}. Recurring themes: {_listing(top)}. "
            f"Feeling words mentioned: {_listing(_emotion_words(emotional_texts))}."
        ),
        "cognitive_summary": cognitive,
        "key_themes": top,
        "context": [],
    }


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def year_comparison(job: Mapping[str, Any]) -> dict[str, Any]:
    """YearComparisonOutput's shape from a `compare_year` job input."""
    year, month = _as_int(job.get("year")), _as_int(job.get("month"))
    name = calendar.month_name[month] if month and 1 <= month <= 12 else "this month"
    by_year = {_as_int(m.get("year")): m for m in job.get("months") or [] if isinstance(m, Mapping)}
    if year is None:
        return {"comparison": "Offline comparison (rule-based): no year was given, so there is nothing to compare."}
    current, previous = by_year.get(year), by_year.get(year - 1)

    def themes(m: Mapping[str, Any] | None) -> list[str]:
        seen: list[str] = []
        for t in (m or {}).get("key_themes") or []:
            t = " ".join(str(t).lower().split())
            if t and t not in seen:
                seen.append(t)
        return seen

    if current is None or previous is None:
        missing = " and ".join(f"{name} {y}" for y, m in ((year - 1, previous), (year, current)) if m is None)
        text = f"Offline comparison (rule-based): there is no monthly summary for {missing}, so there is nothing to compare yet."
        present = current or previous
        if present is not None:
            text += f" {name} {_as_int(present.get('year'))} centred on {_listing(themes(present), 'no recorded themes')}."
        return {"comparison": text}
    now, before = themes(current), themes(previous)
    new = [t for t in now if t not in before]
    stayed = [t for t in now if t in before]
    faded = [t for t in before if t not in now]
    return {
        "comparison": (
            f"Offline comparison (rule-based) of {name} {year - 1} and {name} {year}, by key themes. "
            f"New this year: {_listing(new, 'nothing new')}. Still present: {_listing(stayed, 'nothing')}. "
            f"Faded since last year: {_listing(faded, 'nothing')}."
        )
    }


_HANDLERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "extract": _extract,
    "summarize_conversation": lambda job: {"summary": summarize_turns(_turn_list(job))},
    "title": lambda job: {"title": title_for(_turn_list(job))},
    "summarize_week": weekly_summary,
    "summarize_month": monthly_summary,
    "compare_year": year_comparison,
}
