"""The prose of RESULTS.md: why targets were missed, what in the kit is slow (with a precise
suggestion each), and how the benchmarks were made. Figures are read from results.json so the
text stays true when the report is regenerated."""

from __future__ import annotations

from typing import Any


def _g(d: Any, *path: Any, default: Any = None) -> Any:
    for p in path:
        try:
            d = d[p]
        except (KeyError, IndexError, TypeError):
            return default
    return d


def _ms(us: Any) -> str:
    return "?" if us is None else (f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.0f} µs")


def findings(results: dict[str, Any]) -> list[str]:
    wl = results.get("workloads", {})
    ctx, wr, rd, sw, mem = (wl.get(k, {}) for k in ("context", "writes", "reads", "sweep", "memories"))
    attr = ctx.get("attribution", {})
    runs = [r for t in sw.get("tables", []) for r in t.get("runs", [])]
    worst = max(runs, key=lambda r: r.get("longest_batch_seconds") or 0, default={})
    msg_runs = [r for r in runs if r.get("kind") == "messages"]
    msg_longest = max((r.get("longest_batch_seconds") or 0 for r in msg_runs), default=None)
    a = lambda name: _ms(_g(attr, name, "p50_us"))  # noqa: E731
    out = [
        "## Why targets were missed, and what in the kit made benchmarks slow",
        "",
        "Nothing here was tuned to pass; each point names the cause found by measuring the parts on their own "
        "(section 1's attribution table, auto_explain's nested plans) and a precise change.",
        "",
        f"1. **The hot path runs five to six queries inside a plpgsql function; two of them dominate.** Each measured "
        f"alone at the largest size, round trip included: `select 1` {a('select_1')}, the window (`turn_history`) "
        f"{a('turn_history (window)')}, `resolve_reference` {a('resolve_reference')}, `select_memories` with the query "
        f"{a('select_memories, query, not recorded')} (without a query {a('select_memories, no query, not recorded')}; "
        f"recording the use as well {a('select_memories, query, recorded (as prompt_context)')}), and `prompt_context` "
        f"{a('prompt_context')}. The 3x target ({_ms(3 * (_g(attr, 'select_1', 'p50_us') or 0))}) leaves about two round "
        f"trips of server time for everything; the window query alone takes about "
        f"{_ms(max(0, (_g(attr, 'turn_history (window)', 'p50_us') or 0) - (_g(attr, 'select_1', 'p50_us') or 0)))} of it, "
        f"so the target needs memory selection and the reference lookup to be nearly free: reachable with precomputed "
        f"results, not by tuning these queries. What holds is flatness: every part is an index lookup bounded by one "
        f"conversation or profile, and buffers touched do not grow with the data. The kit records a memory's use when "
        f"the answer is stored (`add_turn(p_used_memory_ids)`), so the prompt read writes nothing. *Suggestion*: points "
        f"2 and 3, and keep each profile's static top-N selection precomputed (refreshed by the memory write paths), "
        f"lifting by the query only among those and the index matches.",
        f"2. **`resolve_reference` evaluates one regular expression per phrase row** (~36 rows, each a regex built "
        f"with `regexp_replace` and matched against the query) on every call: {a('resolve_reference')} p50 on its "
        f"own, for a lookup. *Suggestion*: split the normalised query into words once "
        f"(`regexp_split_to_array`) and match phrases as word n-grams (phrases are at most 3 words: join "
        f"`reference_phrases` on `phrase = any(ngrams)`), or cache one alternation regex per language; skip the lookup "
        f"when p_query is null.",
        f"3. **Selection scores every live memory of the profile, row by row.** `select_memories` computes "
        f"`ts_rank_cd`, `word_similarity` and `memory_private.memory_score` for each live memory. memory_score is an "
        f"SQL function with `set search_path = ''`, and a function with a SET clause is never inlined, so it runs as "
        f"a separate function call per row (the unnamed rows in the nested plans). With 50 memories: "
        f"{a('select_memories, query, not recorded')} with a query, {a('select_memories, no query, not recorded')} "
        f"without; with 1,000 (section 6): {_ms(_g(mem, 'ops', 'select_memories (query, not recorded: as prompt_context)', 'p50_us', default=_g(mem, 'ops', 'select_memories (query, preview)', 'p50_us')))}. "
        f"*Suggestion*: drop the SET clause from memory_score (it references no object, so the search_path lint "
        f"does not apply to its body; mark it `immutable parallel safe`) so it inlines; compute the query lift only "
        f"for candidates the indexes find (`search @@ v_query` through `memories_search_idx`, `p_query <% content` "
        f"through the trigram index) and give the others lift 0; order by a stored static score for the no-query case.",
        f"4. **Dedup never uses the trigram index.** `remember` filters and orders by `extensions.similarity(m.content, "
        f"p_content) >= threshold`, a function call, so `memories_content_trgm_idx` is unused and every live memory of "
        f"the profile is compared (twice: WHERE and ORDER BY); a new memory at the cap then rescored all of them in "
        f"`enforce_memory_cap`. At 1,000 memories per profile: {_ms(_g(mem, 'ops', 'remember (near-duplicate: reinforce)', 'p50_us'))} "
        f"for a duplicate, {_ms(_g(mem, 'ops', 'remember (new: insert + cap)', 'p50_us'))} for a new memory. "
        f"*Suggestion*: `perform set_config('pg_trgm.similarity_threshold', threshold, true)` and filter with "
        f"`m.content operator(extensions.%) p_content` (the GIN index, bitmap-ANDed with `memories_live_idx`), computing "
        f"similarity once in a lateral; run the cap only when the live count exceeds it.",
        f"5. **The kit's client spends four round trips per RPC.** `supamem.Database` builds its pool with "
        f"`check=ConnectionPool.check_connection` (an empty query on every checkout), then sends BEGIN, the call and "
        f"COMMIT. The same `history` call is {_ms(_g(rd, 'lengths', 0, 'kit_history_20', 'p50_us'))} through the client and "
        f"{_ms(_g(rd, 'lengths', 0, 'kit_history_20_single_statement', 'p50_us'))} as one statement; add_turn does "
        f"{_g(wr, 'levels', 0, 'kit', 'turns_per_second')} turns/s through the client and "
        f"{_g(wr, 'levels', 0, 'kit_single_statement', 'turns_per_second')} as one statement (1 client). *Suggestion*: "
        f"an RPC is atomic on its own, so run single-call helpers (`call`, `call_one`, `call_value`) on an autocommit "
        f"connection (no BEGIN/COMMIT), and drop the per-checkout check (let a failed call on a dead connection be "
        f"retried once, or use `max_idle`/`reconnect` instead); keep `transaction()` for multi-call work.",
        f"6. **Per-turn work in the write path.** Even as one statement, add_turn does "
        f"{_g(wr, 'levels', 0, 'kit_single_statement', 'turns_per_second')} turns/s against the peer's "
        f"{_g(wr, 'levels', 0, 'peer', 'turns_per_second')} (1 client): each of the two messages runs `assign_turn` "
        f"(row lock and an UPDATE of the conversation that sets `updated_at` and `expires_at`, both indexed, so "
        f"neither update is HOT and each adds entries to two indexes: four index insertions per turn on "
        f"`conversations`), the window's DELETE (a range `turn_number <= n - window` from turn 1, which walks the "
        f"index entries of every earlier, already deleted turn until vacuum removes them, and fires the FK actions "
        f"on memories and memory_extractions), `check_message_author`, and for the answer `enqueue_turn_jobs` "
        f"(re-reads the question, evaluates the gate, inserts 1-2 jobs); messages carry six indexes against the "
        f"peer's two. *Suggestion*: in `assign_turn`, skip the conversation UPDATE when an answer joins the open "
        f"turn (same turn number; refresh expiry once per turn), delete exactly the turn leaving the window "
        f"(`turn_number = n - window_turns`, the older ones are gone by construction), and add_turn can pass the "
        f"question's id to the enqueue instead of re-reading it.",
        f"7. **Sweep batches are not bounded when sessions expire whole.** `sweep_expired` deletes up to 5,000 "
        f"messages, then up to 5,000 expired conversations, and each conversation takes its remaining messages with it "
        f"by cascade, in the same statement: sweeping {worst.get('expired_rows', '?'):,} expired session messages, "
        f"{worst.get('messages_removed_by_cascade', '?'):,} went by cascade and the longest batch (one transaction) "
        f"took {worst.get('longest_batch_seconds', '?')} s, against {msg_longest} s for the longest bounded batch of "
        f"expired messages in live conversations. *Suggestion*: delete a "
        f"conversation only once its messages are gone (`and not exists (select 1 from memory.messages m where "
        f"m.conversation_id = c.id)`), so messages always leave in bounded, skip-locked batches, and conversations "
        f"follow on a later batch.",
        f"8. **Loading through the triggers** runs at ~{_g(ctx, 'loading', 1, 'triggered', 'rows_per_second', default='?')} "
        f"messages/s set-based (every row locks and updates its conversation and may enqueue jobs), against "
        f"~{_g(ctx, 'loading', 2, 'filler', 'rows_per_second', default='?')} rows/s with triggers off. Imports and "
        f"backfills of history would want an import RPC that numbers turns set-based (`row_number() over "
        f"(partition by conversation_id)`) and updates each conversation once.",
        f"9. **Message search recomputes every tsvector.** `search_messages` runs `to_tsvector('english', content)` "
        f"over every live message of the user for each query (messages carry no text index, on purpose, to keep "
        f"writes lean): {_ms(_g(wl, 'locomo', 'search_latency', 'with_memories', 'p50_us'))} p50 for users of ~600 "
        f"turns in the LoCoMo run, growing linearly with a user's history. *Suggestion*: an expression index "
        f"`create index on memory.messages using gin (to_tsvector('english', content))` (matched with `@@` first, "
        f"ranking only the matches), or rank only the newest N turns; and rank with an IDF-aware score "
        f"(e.g. weight lexemes by `ts_stat` document frequency per user) to close the gap to BM25 on turns alone.",
    ]
    jobs = wl.get("jobs", {})
    loop = [lv for lv in jobs.get("levels", []) if lv.get("provider") == "loopback"]
    off = [lv for lv in jobs.get("levels", []) if lv.get("provider") == "offline"]
    if loop:
        eff = ", ".join(f"{lv['efficiency']} at c={lv['concurrency']}" for lv in loop)
        def rpc(lv: dict[str, Any], name: str) -> float:
            return float(_g(lv, "calls", f"rpc {name}", "p50_us", default=0) or 0)

        parts = "; ".join(
            f"c={lv['concurrency']}: finish_extraction {_ms(rpc(lv, 'finish_extraction'))}, job_input "
            f"{_ms(rpc(lv, 'job_input'))}, claim_jobs {_ms(rpc(lv, 'claim_jobs'))}" for lv in loop)
        out.append(
            f"10. **Jobs: the gap to the ideal is database time per job, not waiting in the worker.** With a 200 ms "
            f"LLM the worker reaches efficiency {eff} (measured / c ÷ 0.2 s), and throughput rises at every step. A "
            f"job's time is the LLM call plus its RPCs (p50: {parts}); at c=1 these calls account for nearly all of a "
            f"job's {1000 / loop[0]['jobs_per_second']:.0f} ms, and at higher concurrency their tails (p95 in "
            f"section 7) account for most of the rest. The RPCs grow with concurrency because 16 jobs' database work, "
            f"the worker's threads and the LLM server share two cores: with the offline provider the same path does "
            f"{', '.join(str(lv['jobs_per_second']) for lv in off)} jobs/s at c = "
            f"{', '.join(str(lv['concurrency']) for lv in off)}. `finish_extraction` dominates: `apply_extraction` runs "
            f"up to three `remember` calls (gate, advisory lock, dedup scan over the profile, insert, history trigger, "
            f"cap) and completes the job in one transaction. *Suggestion*: point 4 (dedup through the index, cap only "
            f"when over), point 5 (one round trip per RPC instead of four), and return job_input's document from "
            f"`claim_jobs` to save an RPC per job.")
    out.append("")
    return out


METHOD = [
    "## Method notes",
    "",
    "- **Isolation.** `make bench` wipes and starts its own cluster on port 54340 (`SUPAMEM_DB_PORT=54340 "
    "scripts/db.sh reset`), applies bench/server.py's settings, restarts, migrates with the local bootstrap, runs "
    "`python -m bench`, and stops the cluster. The shared test database (54322) is refused by `bench/common.py`. "
    "Peers keep their tables in the `public` schema of the same database (`langchain_chat_history`, LangGraph's "
    "`store`). Each workload starts from an empty kit (`truncate memory.users, memory.tenants, memory_private.jobs "
    "cascade`), so `--only` runs are independent.",
    "- **Identity.** The kit is called as `service_role` (what an app server or job uses): `supamem.Database` where "
    "its client is the comparison, a plain connection with `set role service_role` for single-statement timings. "
    "Data generation runs as postgres.",
    "- **Data at scale.** Set-based `insert … select from generate_series`. Filler rows that no benchmark reads "
    "directly bypass triggers with `session_replication_role = replica`; the generator fills the derived columns "
    "(turn_number, user_id, created_at, expires_at, conversations.last_turn) and interleaves rows across "
    "conversations (turn-major), as real traffic leaves them on disk. Everything that is measured (probe "
    "conversations, writers, readers, jobs, LoCoMo) goes through the kit's RPCs and triggers. Both loading rates "
    "are reported in section 1.",
    "- **Timing.** `time.perf_counter_ns` around each client call; warm-up calls first; comparisons interleave their "
    "sides call by call with the first side alternating; concurrent runs use one thread and one connection per "
    "client (the kit's pool sized to the clients). The machine has 2 cores shared by client, server and other "
    "processes, so p99 figures carry scheduler noise; the p50s and the ratios are the stable figures.",
    "- **Ratios** are kit / peer for latencies and throughputs unless the column says otherwise.",
    "- **Noise.** Other engineers' test suites ran on the same 2-core machine during these runs. Interleaving keeps "
    "both sides of a comparison under the same load, but absolute figures move between runs (the kit's history "
    "window read measured 0.50 ms p50 in an earlier full run and 0.98 ms in this one; the peer's 20-message read "
    "0.47 and 0.64 ms). The verdicts held between the two full runs except one: writers' p99 during a sweep was "
    "2.34x in the earlier run (missed) and 1.61x in this one (met), so read that target as borderline.",
    "- **This file** comes from one full `make bench` (all eight workloads, about 17 minutes including the cluster "
    "setup); section 7 was then re-run alone (`make bench BENCH_ARGS='--only jobs'`) after the loopback LLM server "
    "moved to its own process (so its threads never share the worker's GIL; throughput did not change) and per-call "
    "timing was added. Each section's footer says when it ran.",
    "- `python -m bench --only context,writes` runs some workloads (merged into results.json); `BENCH_SCALE=small` is "
    "the quick development run (smaller sizes and sample counts); `python -m bench --report-only` rewrites this file.",
    "",
]
