"""`make demo` (`python -m jobs.demo`): supamem's guided tour, with this package's worker running
the jobs the tour's turns queue (the offline provider unless SUPAMEM_LLM_* says otherwise)."""

from __future__ import annotations

from uuid import UUID

from supamem import demo
from supamem.db import Database

from .handlers import describe_llm, make_llm
from .transport import PsycopgTransport
from .worker import Worker


def run_jobs(db: Database, user_id: UUID) -> str:
    llm = make_llm()
    summary = Worker(PsycopgTransport(db), llm, concurrency=2, lease=60, user_ids=[user_id]).run(once=True)
    done = ", ".join(f"{n} {kind}" for (kind, outcome), n in sorted(summary.counts.items()) if outcome == "done")
    return f"The worker ({describe_llm(llm)}: rule-based, no network) ran {done or 'nothing'}."


if __name__ == "__main__":
    demo.main(run_jobs)
