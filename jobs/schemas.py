"""What the LLM must answer, one pydantic model per job kind, and the strict JSON Schema it is sent.

Every model forbids extra fields and is validated strictly (`model_validate_json(..., strict=True)`
in `jobs.llm`), so an answer either matches exactly or is retried once with the validation error.

The schemas are also sent to the provider as OpenAI "structured outputs" (`strict: true`), whose
schema dialect is a subset of JSON Schema: every object closes with `additionalProperties: false`,
every property is listed in `required` (optional means nullable), no open dictionaries, no
`oneOf`/`discriminator`, no defaults. `strict_json_schema()` turns a model's pydantic schema into
that subset. Length and range limits (`maxLength`, `minimum`, ...) are accepted by OpenAI but not
by every OpenAI-compatible server (Gemini, Ollama and llama.cpp differ), so they are moved into the
field descriptions, where the model reads them, and enforced here on our side instead.

Two fields of the SQL side are JSON objects with free keys (a memory's `context`,
`memory.finish_monthly_summary`'s `p_context`). An open object cannot be expressed in a strict
schema, so the model answers a list of `{"key", "value"}` pairs (`KeyValue`) and
`context_dict()` converts it. A list of pairs was chosen over a JSON-encoded string because the
provider can still constrain its shape and a malformed pair fails validation here, with a
precise error for the corrective retry, instead of failing later in SQL.
"""

from __future__ import annotations

import copy
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

__all__ = [
    "MEMORY_TYPES",
    "MemoryType",
    "KeyValue",
    "AddOperation",
    "UpdateOperation",
    "DeleteOperation",
    "NoOperation",
    "Operation",
    "ExtractionOutput",
    "ConversationSummaryOutput",
    "TitleOutput",
    "WeeklySummaryOutput",
    "MonthlySummaryOutput",
    "YearComparisonOutput",
    "OUTPUT_MODELS",
    "strict_json_schema",
]

# The rows of memory.memory_types (migration 20261122000700_memories.sql).
MemoryType = Literal[
    "goal", "pattern", "relationship", "decision", "preference", "project", "fact", "entity", "emotion"
]
MEMORY_TYPES: tuple[str, ...] = MemoryType.__args__  # type: ignore[attr-defined]


def _blank_to_none(value: Any) -> Any:
    """A model that writes "" for "no category" means null; the SQL check rejects blank text."""
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _text(max_length: int) -> Any:
    """Non-blank text (stripped) of at most `max_length` characters."""
    return Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=max_length)]


Content = _text(500)
Category = Annotated[_text(100) | None, BeforeValidator(_blank_to_none)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
Theme = _text(100)


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeyValue(_Output):
    """One key/value entry."""

    # A free-form JSON object as a strict schema can express it (see the module docstring).

    key: _text(100)
    value: _text(500)


def _pairs_to_dict(pairs: list[KeyValue]) -> dict[str, str]:
    return {pair.key: pair.value for pair in pairs}  # a repeated key: the last one wins


class AddOperation(_Output):
    """Remember something new about the user."""

    # Applied by memory.remember; near-duplicates are merged by the database.

    op: Literal["add"]
    content: Content = Field(description="The memory, one short third-person sentence about the user.")
    type: MemoryType
    confidence: Confidence = Field(description="How sure the user's words make it; 0.3 or less for medical or financial claims.")
    category: Category = Field(default=None, description="A short topic such as work, health, family; null if none.")
    context: list[KeyValue] = Field(default_factory=list, description="Optional key/value notes; [] if none.")

    def context_dict(self) -> dict[str, str]:
        return _pairs_to_dict(self.context)


class UpdateOperation(_Output):
    """Replace an existing memory that the new message contradicts or refines."""

    # Applied by memory.revise_memory: the old memory is kept as history, superseded.

    op: Literal["update"]
    memory_id: uuid.UUID = Field(description="The id of one of the existing memories given in the input.")
    content: Content
    type: MemoryType | None = Field(default=None, description="null keeps the existing type.")
    confidence: Confidence | None = Field(default=None, description="null keeps the existing confidence.")
    category: Category = Field(default=None, description="null keeps the existing category.")


class DeleteOperation(_Output):
    """Forget an existing memory the user retracted or asked to forget."""

    # Applied by memory.forget, a soft delete the user can undo.

    op: Literal["delete"]
    memory_id: uuid.UUID = Field(description="The id of one of the existing memories given in the input.")


class NoOperation(_Output):
    """Explicitly nothing to do."""

    op: Literal["none"]


Operation = Annotated[
    AddOperation | UpdateOperation | DeleteOperation | NoOperation, Field(discriminator="op")
]


class ExtractionOutput(_Output):
    """0 to 3 operations on the user's long-term memories."""

    # Output of the `extract` job, for memory.finish_extraction.

    operations: list[Operation] = Field(max_length=3, description="At most 3 operations; [] when nothing is worth remembering.")

    def to_operations(self) -> list[dict[str, Any]]:
        """The JSON array `memory.finish_extraction(p_operations)` / `memory.apply_extraction` take."""
        result: list[dict[str, Any]] = []
        for operation in self.operations:
            item = operation.model_dump(mode="json", exclude_none=True)
            if isinstance(operation, AddOperation):
                item["context"] = operation.context_dict()
            result.append(item)
        return result

    def memory_ids(self) -> list[uuid.UUID]:
        """The existing memories this answer updates or deletes, once for each operation naming one."""
        return [
            operation.memory_id
            for operation in self.operations
            if isinstance(operation, (UpdateOperation, DeleteOperation))
        ]


class ConversationSummaryOutput(_Output):
    """A summary of the conversation turns."""

    # Output of the `summarize_conversation` job (seed 004: 100-200 tokens).

    summary: _text(2000) = Field(description="100-200 tokens summarising the turns; nothing invented.")


class TitleOutput(_Output):
    """A title for the conversation."""

    # Output of the `title` job, for memory.finish_title.

    title: _text(80) = Field(description="A short conversation title, at most 80 characters, no trailing punctuation.")


class WeeklySummaryOutput(_Output):
    """A summary of the user's week."""

    # Output of the `summarize_week` job, for memory.finish_weekly_summary.

    emotional_summary: _text(2000) = Field(description="Dominant emotional patterns and energy shifts across the week.")
    key_themes: list[Theme] = Field(max_length=5, description="At most 5 key themes or concerns, a few words each.")
    dominant_patterns: list[Theme] = Field(max_length=5, description="At most 5 recurring patterns; [] if none.")


class MonthlySummaryOutput(_Output):
    """A summary of the user's month."""

    # Output of the `summarize_month` job, for memory.finish_monthly_summary.

    emotional_summary: _text(2000)
    cognitive_summary: _text(2000) = Field(description="How the user thought about things: focus, reasoning, decisions.")
    key_themes: list[Theme] = Field(max_length=5, description="At most 5 key themes of the month.")
    context: list[KeyValue] = Field(
        default_factory=list, description="Circumstances worth keeping as key/value pairs; [] if none."
    )

    def context_dict(self) -> dict[str, str]:
        """The JSON object `memory.finish_monthly_summary(p_context)` takes."""
        return _pairs_to_dict(self.context)


class YearComparisonOutput(_Output):
    """The same month a year apart, compared."""

    # Output of the `compare_year` job, for memory.finish_year_comparison.

    comparison: _text(4000) = Field(description="Growth and evolution between the same month a year apart.")


# Job kind (memory_private.jobs.kind, as memory.job_input reports it) -> output model.
OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    "extract": ExtractionOutput,
    "summarize_conversation": ConversationSummaryOutput,
    "title": TitleOutput,
    "summarize_week": WeeklySummaryOutput,
    "summarize_month": MonthlySummaryOutput,
    "compare_year": YearComparisonOutput,
}


# --- strict JSON schema --------------------------------------------------------------------------

# Moved into the description (see the module docstring); the value is how the hint reads.
_CONSTRAINT_HINTS = {
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "more than {}",
    "exclusiveMaximum": "less than {}",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
}
# Dropped: pydantic bookkeeping or keywords outside the strict subset. `format: uuid` would be
# fine for OpenAI but not for every compatible server; the description says "id" already.
_DROPPED = {"default", "title", "discriminator", "format", "pattern"}


def _strictify(node: Any) -> Any:
    if isinstance(node, list):
        return [_strictify(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in _CONSTRAINT_HINTS:
            limits[key] = value
        elif key == "oneOf":  # a discriminated union: the `op` enums already tell the branches apart
            out["anyOf"] = _strictify(value)
        elif key == "const":
            out["enum"] = [value]
        elif key in ("properties", "$defs"):
            out[key] = {name: _strictify(sub) for name, sub in value.items()}
        else:
            out[key] = _strictify(value)
    if "properties" in out or out.get("type") == "object":
        out.setdefault("properties", {})
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    hints = [
        "not empty" if key == "minLength" and limits[key] == 1 else template.format(limits[key])
        for key, template in _CONSTRAINT_HINTS.items()
        if key in limits
    ]
    if hints and "$ref" not in out:  # a $ref must stand alone in the strict dialect
        hint = ", ".join(hints)
        if out.get("description"):
            out["description"] = f"{out['description'].rstrip('.')} ({hint})."
        else:
            out["description"] = hint[0].upper() + hint[1:] + "."
    return out


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON Schema in the structured-outputs strict subset (see the module docstring)."""
    schema = copy.deepcopy(model.model_json_schema(mode="validation"))
    return _strictify(schema)
