"""7. Jobs: extraction jobs per second through the kit's worker (`jobs.worker.Worker`, claim ->
job_input -> LLM -> finish_extraction), with the offline provider and with a loopback
OpenAI-compatible server that answers in 200 ms, at concurrency 1, 4 and 16.

Each level gets a fresh batch of extraction jobs from the kit itself: one turn per user in a
conversation whose gate is open (primary profile, remember on), inserted set-based through the
triggers, which note each question; the worker's claims queue the notes as jobs, inside the
timed run. One user per job keeps every job under the per-user extraction rate limit
(60 a minute). The loopback server computes the offline provider's answer and sleeps the rest of
200 ms, so with the LLM as the only bottleneck a worker at concurrency c does c / 0.2 s jobs a
second; efficiency is measured / that ideal.

Then a claim's cost against the number of users waiting: one queued `summarize_week` job for each
of 500, 5,000 and 50,000 users (as a weekly summary run leaves them), a claim of 1 and of 16 jobs
timed as the service role, each rolled back so the same users keep waiting.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import data
from .common import Timer, admin, bench_url, log, one, pick, service
from .stats import summarize

LLM_DELAY = 0.200
LEVELS = (1, 4, 16)

MESSAGE = ("'I love ' || {w1} || ' and ' || {w2} || '. My sister is ' || "
           "(array['Ana','Maria','Lea','Sofia','Ines','Clara'])[1 + mod(abs(hashtext(c.id::text)::bigint), 6)] || "
           "'. I want to visit ' || {w3} || ' next spring.'")


class _LoopbackLLM(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: the offline provider's answer after LLM_DELAY seconds."""

    provider: Any = None

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        started = time.monotonic()
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        answer = self.provider.chat(body)
        answer["usage"] = {"prompt_tokens": 400, "completion_tokens": 60, "total_tokens": 460}
        payload = json.dumps(answer).encode()
        time.sleep(max(0.0, LLM_DELAY - (time.monotonic() - started)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


def _serve(port_queue: Any) -> None:
    """The loopback LLM in its own process, so its threads never share the worker's GIL."""
    from jobs.offline import OfflineProvider

    _LoopbackLLM.provider = OfflineProvider()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LoopbackLLM)
    server.daemon_threads = True
    port_queue.put(server.server_address[1])
    server.serve_forever()


def _enqueue(count: int, tag: str) -> int:
    words = {f"w{i}": data.text_expr(f"c.id::text || '{i}'", 1) for i in (1, 2, 3)}
    with admin() as conn:
        data.create_users(conn, count, f"job{tag}", conversation_title=f"job{tag}", conversation_profile=True)
        before = int(one(conn, "select queued from memory.job_stats() where kind = 'extract'") or 0)
        conn.execute(
            f"""
            insert into memory.messages (conversation_id, role, content)
            select c.id, r.role, case when r.role = 'user' then {MESSAGE.format(**words)}
                else 'That sounds lovely; tell me more about your plans.' end
            from memory.conversations as c
            cross join (values ('user'), ('assistant')) as r (role)
            where c.title = %s
            order by c.id, r.role desc
            """,
            (f"job{tag}",),
        )
        after = int(one(conn, "select queued from memory.job_stats() where kind = 'extract'") or 0)
    return after - before


def _run_level(provider: str, concurrency: int, jobs: int, base_url: str | None) -> dict[str, Any]:
    from jobs.llm import LLMClient, LLMSettings
    from jobs.transport import PsycopgTransport
    from jobs.worker import Worker

    queued = _enqueue(jobs, f"{provider}{concurrency}")
    if provider == "offline":
        llm = LLMClient(LLMSettings(provider="offline"))
    else:
        llm = LLMClient(LLMSettings(provider="openai", base_url=base_url, api_key="loopback", model="loopback",
                                    timeout=30, max_retries=0))
    transport = PsycopgTransport.from_url(bench_url(), max_size=concurrency + 2)
    # Where a job's time goes: each RPC and each LLM call, timed around the call (wrappers only).
    timings: dict[str, list[int]] = {}

    def timed(name: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                timings.setdefault(name, []).append(time.perf_counter_ns() - t0)
        return call

    rpc = transport.rpc
    transport.rpc = lambda function, params=None: timed(f"rpc {function}", rpc)(function, params)  # type: ignore[method-assign]
    llm.transport.chat = timed("llm chat", llm.transport.chat)  # type: ignore[method-assign]
    worker = Worker(transport, llm, kinds=["extract"], concurrency=concurrency, lease=120,
                    worker_name=f"bench-{provider}-{concurrency}")
    with Timer() as t:
        summary = worker.run(once=True)
    transport.close()
    llm.close()
    done = summary.total("done")
    with admin() as conn:
        memories = int(one(conn, "select count(*) from memory.memories"))
    entry = {"provider": provider, "concurrency": concurrency, "queued": queued, "done": done,
             "calls": {name: summarize(v) for name, v in sorted(timings.items())},
             "outcomes": {k: dict(v) for k, v in summary.by_kind().items()}, "seconds": t.seconds,
             "jobs_per_second": round(done / t.seconds, 2) if t.seconds else None, "memories_total_after": memories}
    if provider == "loopback":
        entry["ideal_jobs_per_second"] = round(concurrency / LLM_DELAY, 2)
        entry["efficiency"] = round(entry["jobs_per_second"] / entry["ideal_jobs_per_second"], 3)
    log(f"jobs: {provider} c={concurrency}: {done}/{queued} in {t.seconds}s = {entry['jobs_per_second']}/s")
    return entry


def _claims_against_waiting() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    waiting = 0
    with admin() as conn, service(autocommit=False) as svc:
        for count in pick((100, 1000), (500, 5000, 50000)):
            conn.execute(
                "with u as (insert into memory.users (external_id) select format('claims-waiting-%%s', i)"
                " from generate_series(%s, %s - 1) as i returning id)"
                " insert into memory_private.jobs (kind, payload, user_id, max_attempts) select 'summarize_week', '{}', u.id, 5"
                " from u", (waiting, count))
            conn.execute("analyze memory_private.jobs, memory_private.job_waiters")
            waiting = count
            for limit in (1, 16):
                samples = []
                for _ in range(pick(20, 60)):
                    t0 = time.perf_counter_ns()
                    svc.execute("select * from memory.claim_jobs(array['summarize_week'], 'bench-claims', %s)",
                                (limit,)).fetchall()
                    samples.append(time.perf_counter_ns() - t0)
                    svc.rollback()
                rows.append({"waiting": count, "limit": limit, **summarize(samples[5:])})
                log(f"jobs: claim of {limit} with {count} users waiting: p50 {rows[-1]['p50_us']} us")
        conn.execute("delete from memory.users where external_id like 'claims-waiting-%'")
    return rows


def run() -> dict[str, Any]:
    try:
        from jobs.offline import OfflineProvider  # noqa: F401 - the worker and provider must import
        from jobs.worker import Worker  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - jobs/ may still be in progress
        return {"skipped": f"the jobs package does not import: {type(exc).__name__}: {exc}"}
    logging.getLogger("supamem").setLevel(logging.WARNING)
    logging.getLogger("jobs").setLevel(logging.ERROR)
    data.reset_data()
    out: dict[str, Any] = {"llm_delay_s": LLM_DELAY, "levels": []}
    for c in LEVELS:
        out["levels"].append(_run_level("offline", c, pick(60, 300) * (1 if c == 1 else 2), None))
    ctx = multiprocessing.get_context("spawn")
    port_queue = ctx.Queue()
    server = ctx.Process(target=_serve, args=(port_queue,), daemon=True, name="bench-loopback-llm")
    server.start()
    try:
        base_url = f"http://127.0.0.1:{port_queue.get(timeout=30)}/v1"
        for c in LEVELS:
            jobs = max(10, int(c / LLM_DELAY * pick(3, 8)))
            out["levels"].append(_run_level("loopback", c, jobs, base_url))
    finally:
        server.terminate()  # the process started above, by its own handle
        server.join(timeout=10)
    out["loopback_server"] = "ThreadingHTTPServer in its own process (no GIL shared with the worker)"
    out["claims"] = _claims_against_waiting()
    return out
