"""One handler per job kind: read the input, ask the LLM, write the result through SQL.

    memory.job_input(job, worker)  ->  prompt  ->  LLMClient.complete  ->  memory.finish_*(...)

Each `finish_*` RPC checks the lease, validates the output, writes it and completes the job in
one transaction, so a handler never writes anything else. This is the one module that knows the
LLM client's API (`jobs.llm`, `jobs.prompts`, `jobs.schemas`); the worker sees only
`run_job()`, `ClaimedJob`, `JobResult` and two neutral exceptions:

- `JobFailed`: this attempt failed and the job should be retried later (`memory.fail_job`), with
  `retry_after` seconds when the provider said so (HTTP 429 / 503 Retry-After), or, `final`, not
  at all (HTTP 400, 413, 422: the provider refuses the request itself); `unavailable` when the
  provider gave no answer (429, 5xx, a timeout, no connection), which the worker counts to tell
  an outage from a job's own failure;
- `ConfigurationError`: no job can succeed with this worker's configuration (bad API key, base
  URL or model): the worker hands its jobs back and stops instead of burning their attempts.

Database errors (`supamem.errors`, `supamem.errors.StateError`) pass through unchanged.

A job that `memory.job_input` answers with `{"deferred": {"run_after", "reason"}}` is already
back in the queue, its attempt given back (an extraction past its user's rate limit): its
handler does not run and the model is not asked.

A job with nothing to work on (its conversation's turns or its week's summaries are gone, a year
comparison whose months are no longer both there) is completed with `memory.complete_job` and a
`{"skipped": reason}` result instead of asking the model to invent something.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jobs.embeddings import EmbeddingClient, Refused
from jobs.llm import (
    INPUT_REFUSALS,
    LLMBadResponse,
    LLMClient,
    LLMConfigError,
    LLMError,
    LLMRateLimited,
    LLMRequestError,
    LLMServerError,
)
from jobs.prompts import Prompt, build_prompt
from jobs.schemas import (
    ConversationSummaryOutput,
    ExtractionOutput,
    MonthlySummaryOutput,
    TitleOutput,
    WeeklySummaryOutput,
    YearComparisonOutput,
)

from .transport import Transport

#: Job kinds this runner handles (memory_private.jobs.kind).
KINDS: tuple[str, ...] = (
    "extract",
    "summarize_conversation",
    "title",
    "summarize_week",
    "summarize_month",
    "compare_year",
    "embed",
)
#: Names for several kinds at once on the command line (`--kinds extract,summarize`).
KIND_GROUPS: dict[str, tuple[str, ...]] = {
    "summarize": ("summarize_conversation", "summarize_week", "summarize_month", "compare_year"),
}


class JobFailed(Exception):
    """This attempt failed; retry the job later (after `retry_after` seconds if known), or, when
    `final`, never: the same request would fail the same way. `unavailable`: the provider gave no
    answer (rate limited, a server error, a timeout, no connection) after the client's retries."""

    def __init__(
        self, message: str, *, retry_after: float | None = None, final: bool = False, unavailable: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.final = final
        self.unavailable = unavailable


class ConfigurationError(Exception):
    """The worker is misconfigured (LLM key, URL or model): no job can succeed."""


@dataclass(frozen=True)
class ClaimedJob:
    """A row of `memory.claim_jobs`."""

    id: int
    kind: str
    payload: dict[str, Any]
    user_id: str | None
    attempts: int
    leased_until: str | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ClaimedJob:
        return cls(
            id=int(row["id"]),
            kind=str(row["kind"]),
            payload=dict(row.get("payload") or {}),
            user_id=None if row.get("user_id") is None else str(row["user_id"]),
            attempts=int(row.get("attempts") or 0),
            leased_until=row.get("leased_until"),
        )


@dataclass(frozen=True)
class JobResult:
    """What a handler did: `done`, `skipped` (completed without the model) or `deferred`."""

    outcome: str
    tokens: int | None = None
    result: Any = None


@dataclass(frozen=True)
class _Context:
    job: ClaimedJob
    transport: Transport
    llm: LLMClient
    worker: str
    defer_delay: float
    embedder: EmbeddingClient | None

    def rpc(self, function: str, **params: Any) -> Any:
        return self.transport.rpc(function, {"p_job_id": self.job.id, "p_worker": self.worker, **params})

    def ask(self, job_input: Mapping[str, Any]) -> tuple[Any, dict[str, Any], int]:
        """The model's validated answer for this input, its usage (JSON) and total tokens."""
        prompt: Prompt = build_prompt(job_input)
        completion = self.llm.complete(prompt.messages, prompt.output, name=prompt.name, check=prompt.check)
        usage = completion.usage.model_dump(mode="json")
        usage["attempts"] = completion.attempts
        return completion.value, usage, completion.usage.total_tokens

    def skip(self, reason: str) -> JobResult:
        self.rpc("complete_job", p_result={"skipped": reason})
        return JobResult("skipped", None, {"skipped": reason})


# --- handlers ---------------------------------------------------------------------------------


def _extract(ctx: _Context, data: Mapping[str, Any]) -> JobResult:
    if not data.get("user_message"):
        return ctx.skip("the source message is gone")
    value, usage, tokens = ctx.ask(data)
    assert isinstance(value, ExtractionOutput)
    result = ctx.rpc("finish_extraction", p_operations=value.to_operations(), p_usage=usage)
    return JobResult("done", tokens, result)


def _summarize_conversation(ctx: _Context, data: Mapping[str, Any]) -> JobResult:
    if not data.get("turns"):
        return ctx.skip("the turns are gone")
    value, usage, tokens = ctx.ask(data)
    assert isinstance(value, ConversationSummaryOutput)
    result = ctx.rpc("finish_conversation_summary", p_summary=value.summary, p_usage=usage)
    return JobResult("done", tokens, result)


def _title(ctx: _Context, data: Mapping[str, Any]) -> JobResult:
    if not data.get("turns"):
        return ctx.skip("the first turn is gone")
    value, usage, tokens = ctx.ask(data)
    assert isinstance(value, TitleOutput)
    result = ctx.rpc("finish_title", p_title=value.title, p_usage=usage)
    return JobResult("done", tokens, result)


def _summarize_week(ctx: _Context, data: Mapping[str, Any]) -> JobResult:
    if not data.get("summaries"):
        return ctx.skip("no conversation summaries in this week")
    value, usage, tokens = ctx.ask(data)
    assert isinstance(value, WeeklySummaryOutput)
    result = ctx.rpc(
        "finish_weekly_summary",
        p_emotional_summary=value.emotional_summary,
        p_key_themes=list(value.key_themes),
        p_dominant_patterns=list(value.dominant_patterns),
        p_usage=usage,
    )
    return JobResult("done", tokens, result)


def _summarize_month(ctx: _Context, data: Mapping[str, Any]) -> JobResult:
    if int(data.get("weeks_pending") or 0) > 0:
        # Its weeks are still queued or running: come back later, without spending an attempt.
        ctx.rpc("defer_job", p_delay=f"{ctx.defer_delay} seconds")
        return JobResult("deferred", None, {"weeks_pending": data.get("weeks_pending")})
    if not data.get("weekly_summaries"):
        return ctx.skip("no weekly summaries in this month")
    value, usage, tokens = ctx.ask(data)
    assert isinstance(value, MonthlySummaryOutput)
    result = ctx.rpc(
        "finish_monthly_summary",
        p_emotional_summary=value.emotional_summary,
        p_cognitive_summary=value.cognitive_summary,
        p_key_themes=list(value.key_themes),
        p_context=value.context_dict(),
        p_usage=usage,
    )
    return JobResult("done", tokens, result)


def _compare_year(ctx: _Context, data: Mapping[str, Any]) -> JobResult:
    if len(data.get("months") or []) < 2:
        # memory.compare_year queues only when both months exist; one was deleted since.
        return ctx.skip("both months need a monthly summary")
    value, usage, tokens = ctx.ask(data)
    assert isinstance(value, YearComparisonOutput)
    result = ctx.rpc("finish_year_comparison", p_comparison=value.comparison, p_usage=usage)
    return JobResult("done", tokens, result)


def _embed(ctx: _Context, data: Mapping[str, Any]) -> JobResult:
    items = data.get("items") or []
    if not items:
        return ctx.skip("nothing left to embed")
    if ctx.embedder is None:
        raise ConfigurationError("this worker has no embeddings client for embed jobs")
    rows = ctx.embedder.embed_rows(
        [str(i["text"]) for i in items], model=str(data["model"]), dimensions=int(data["dimensions"])
    )
    result = ctx.rpc(
        "finish_embeddings",
        p_model=data["model"],
        # Each item's version (its text's md5) goes back, so a row edited meanwhile keeps its note;
        # a text the server refused keeps the refusal, and is not sent again.
        p_items=[{"kind": i["kind"], "id": i["id"], "version": i.get("version"),
                  **({"refused": r.reason} if isinstance(r, Refused) else {"embedding": r})}
                 for i, r in zip(items, rows, strict=True)],
    )
    return JobResult("done", None, result)


HANDLERS: dict[str, Callable[[_Context, Mapping[str, Any]], JobResult]] = {
    "extract": _extract,
    "summarize_conversation": _summarize_conversation,
    "title": _title,
    "summarize_week": _summarize_week,
    "summarize_month": _summarize_month,
    "compare_year": _compare_year,
    "embed": _embed,
}
#: The RPC that reads a job's input, when it is not memory.job_input.
INPUTS: dict[str, str] = {"embed": "embedding_input"}
assert tuple(HANDLERS) == KINDS


# --- entry points -----------------------------------------------------------------------------


def run_job(
    job: ClaimedJob,
    *,
    transport: Transport,
    llm: LLMClient,
    worker: str,
    defer_delay: float = 30.0,
    embedder: EmbeddingClient | None = None,
) -> JobResult:
    """Run one claimed job to its result RPC. Raises JobFailed, ConfigurationError, or the
    database's errors (StateError when another worker owns the job now)."""
    handler = HANDLERS.get(job.kind)
    if handler is None:
        raise JobFailed(f"no handler for job kind {job.kind!r}")
    ctx = _Context(job, transport, llm, worker, defer_delay, embedder)
    data = ctx.rpc(INPUTS.get(job.kind, "job_input"))
    if not isinstance(data, Mapping):
        raise JobFailed(f"memory.job_input returned {type(data).__name__}, expected an object")
    if data.get("deferred"):
        # The database has put the job back in the queue (an extraction past its user's rate
        # limit), attempt given back: nothing to ask the model.
        return JobResult("deferred", None, data["deferred"])
    try:
        return handler(ctx, data)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc
    except LLMRequestError as exc:
        if exc.status in (401, 403, 404):  # key, access or model/URL: every job would fail the same way
            raise ConfigurationError(str(exc)) from exc
        # The request itself was refused (malformed, too large, unprocessable): sent again, the same
        # job's request is refused again, so the job goes to the dead letters at once.
        raise JobFailed(f"LLM request rejected: {exc}", final=exc.status in INPUT_REFUSALS) from exc
    except LLMRateLimited as exc:
        raise JobFailed(f"LLM rate limited: {exc}", retry_after=exc.retry_after, unavailable=True) from exc
    except LLMServerError as exc:
        raise JobFailed(f"LLM server error: {exc}", retry_after=exc.retry_after, unavailable=True) from exc
    except LLMBadResponse as exc:
        raise JobFailed(f"LLM answer unusable: {exc}") from exc
    except LLMError as exc:  # timeouts, connection errors
        raise JobFailed(f"{type(exc).__name__}: {exc}", unavailable=True) from exc


def make_llm(environ: Mapping[str, str] | None = None) -> LLMClient:
    """The LLM client the environment configures (SUPAMEM_LLM_*; offline by default).
    Raises ConfigurationError when the configuration cannot work."""
    try:
        return LLMClient.from_env(environ)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc


def make_embedder(environ: Mapping[str, str] | None = None) -> EmbeddingClient:
    """The embeddings client the environment configures (SUPAMEM_EMBEDDING_*; offline by
    default). Raises ConfigurationError when the configuration cannot work."""
    try:
        return EmbeddingClient.from_env(environ)
    except LLMConfigError as exc:
        raise ConfigurationError(str(exc)) from exc


def describe_llm(llm: LLMClient) -> str:
    """provider/model, for logs and --help output."""
    return f"{llm.settings.provider}/{llm.model}"


__all__ = [
    "HANDLERS",
    "KINDS",
    "ClaimedJob",
    "ConfigurationError",
    "JobFailed",
    "JobResult",
    "describe_llm",
    "make_embedder",
    "make_llm",
    "run_job",
]
