"""8. Retrieval quality on LoCoMo (development split, ../shared/data/locomo/, read in place).

Loading, through the kit:
- one kit user per LoCoMo conversation, the memory owner, with a primary profile, and one kit
  conversation holding every session in order. speaker_a's turns are `user` messages,
  speaker_b's `assistant` messages (memory.add_message; the kit numbers the turns). Each message
  is "Speaker: text" plus " [shares a photo: caption]" when the turn has an image caption.
  created_at is set to the session's date as postgres after insertion (the table stamps now()
  on insert by design).
Retrieval: for each question, memory.search_messages(question, user, conversation, limit 20)
ranks the turns (BM25 in SQL over the stored tsvectors); ranked messages map back to dia_ids.
The BM25 baseline (rank_bm25 BM25Okapi, k1=1.5, b=0.75) ranks the same turn texts, lower-cased,
stop words removed. Both rows are the systems' own work and carry the target's verdict.
Upper bound, no verdict: LoCoMo's `observation` facts are the data set authors' annotations
(they cite most evidence turns), so search over turns plus those facts as memories is an oracle.
They enter only through the kit's own write path, `memory.remember(p_source_message_id => ...)`,
and the gate decides: it admits facts of the owner's own turns (speaker_a) and refuses those of
answers (speaker_b); refusals are counted, nothing goes around the gate.
Metrics over the top 20: recall@5/10/20 (share of a question's evidence turns found), hit@k (any
found) and MRR. Categories 1-4 together and each alone; category 5 (adversarial) separately.
Evidence ids are normalised ("D8:6; D9:17" -> two ids, "D:11:26" -> "D11:26", "D30:05" ->
"D30:5"); ids naming turns that do not exist are dropped and counted.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import psycopg

from . import data
from .common import LOCOMO_DIR, admin, bench_url, log, one, pick, service
from .stats import summarize

KS = (5, 10, 20)
STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't
she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then
there there's these they they'd they'll they're they've this those through to too under until up very was
wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's
whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
s t d ll m re ve did does
""".split())
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_EVIDENCE = re.compile(r"^D:?(\d+):0*(\d+)$")


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def parse_date(value: str) -> datetime:
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def normalise(evidence: list[Any], valid: set[str]) -> tuple[list[str], int, int]:
    """(valid dia ids, ids rewritten, ids dropped)."""
    out: list[str] = []
    rewritten = dropped = 0
    for raw in evidence:
        for part in re.split(r"[;,\s]+", str(raw).strip()):
            if not part:
                continue
            m = _EVIDENCE.match(part)
            if not m:
                dropped += 1
                continue
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia != part or len(str(raw).strip()) != len(part):
                rewritten += 1
            if dia not in valid:
                dropped += 1
                continue
            if dia not in out:
                out.append(dia)
    return out, rewritten, dropped


def sessions(conv: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    out = []
    for key, value in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(value, list) and value:
            n = int(m.group(1))
            out.append((n, parse_date(conv[f"session_{n}_date_time"]), value))
    return sorted(out)


def score(ranked: list[str], evidence: list[str]) -> dict[str, float]:
    ev = set(evidence)
    res: dict[str, float] = {}
    for k in KS:
        found = ev & set(ranked[:k])
        res[f"recall@{k}"] = len(found) / len(ev)
        res[f"hit@{k}"] = 1.0 if found else 0.0
    res["mrr"] = next((1.0 / (i + 1) for i, d in enumerate(ranked[:20]) if d in ev), 0.0)
    return res


def aggregate(rows: list[tuple[int, dict[str, float]]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for category, s in rows:
        groups[str(category)].append(s)
        if category in (1, 2, 3, 4):
            groups["1-4"].append(s)
    return {g: {"questions": len(v), **{m: round(sum(x[m] for x in v) / len(v), 4) for m in v[0]}}
            for g, v in sorted(groups.items())}


def _load(conn: Any, sample: dict[str, Any]) -> dict[str, Any]:
    conv = sample["conversation"]
    sid = sample["sample_id"]
    uid = one(conn, "select memory.user_id_for(%s)", (f"locomo-{sid}",))
    pid = one(conn, "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", (uid,))
    cid = one(conn, "select (memory.create_conversation(p_user_id => %s, p_profile_id => %s, p_title => %s)).id",
              (uid, pid, sid))
    dia_to_msg: dict[str, int] = {}
    msg_to_dia: dict[int, str] = {}
    roles: dict[int, str] = {}
    texts: dict[str, str] = {}
    ids, dates = [], []
    for _, when, turns in sessions(conv):
        for turn in turns:
            role = "user" if turn["speaker"] == conv["speaker_a"] else "assistant"
            text = turn_text(turn)
            mid = one(conn, "select (memory.add_message(%s, %s, %s)).id", (cid, role, text))
            dia_to_msg[turn["dia_id"]] = mid
            msg_to_dia[mid] = turn["dia_id"]
            roles[mid] = role
            texts[turn["dia_id"]] = text
            ids.append(mid)
            dates.append(when)
    return {"sample_id": sid, "user_id": str(uid), "profile_id": str(pid), "conversation_id": str(cid),
            "dia_to_msg": dia_to_msg, "msg_to_dia": msg_to_dia, "roles": roles, "texts": texts,
            "ids": ids, "dates": dates}


def _observations(conn: Any, sample: dict[str, Any], loaded: dict[str, Any], counts: dict[str, int]) -> None:
    """The annotations as memories, through memory.remember and its gate (the oracle row)."""
    valid = set(loaded["dia_to_msg"])
    for _session, by_speaker in sorted(sample.get("observation", {}).items()):
        if not isinstance(by_speaker, dict):
            continue
        for speaker, facts in by_speaker.items():
            for item in facts:
                fact, raw = item[0], item[1] if len(item) > 1 else ""
                dias, _, _ = normalise([raw], valid)
                counts["facts"] += 1
                if not dias:
                    counts["no such turn: not stored"] += 1
                    continue
                mid = loaded["dia_to_msg"][dias[0]]
                context = json.dumps({"dia_id": dias[0], "speaker": speaker})
                try:
                    outcome = conn.execute(
                        "select outcome from memory.remember(p_content => %s, p_type => 'fact', p_user_id => %s, "
                        "p_source_message_id => %s, p_context => %s)",
                        (fact, loaded["user_id"], mid, context)).fetchone()[0]
                    counts[f"remember: {outcome}"] += 1
                except psycopg.errors.InsufficientPrivilege:
                    counts["refused by the gate (an answer's turn)"] += 1


SEARCH = ("select id from memory.search_messages(p_query => %s, p_user_id => %s, p_conversation_id => %s, "
          "p_limit => 20, p_query_embedding => %s::extensions.vector)")
# The vector side alone (the function search_messages fuses), for the "kit vector" row.
VECTOR = "select message_id from memory_private.vector_messages(%s, %s::extensions.vector, %s, 20)"


def _rank_kit(conn: Any, loaded: dict[str, Any], question: str, embedding: str | None, latencies: list[int],
              *, vector_only: bool = False) -> list[str]:
    t0 = time.perf_counter_ns()
    if vector_only:
        params: tuple[Any, ...] = (loaded["user_id"], embedding, loaded["conversation_id"])
    else:
        params = (question, loaded["user_id"], loaded["conversation_id"], embedding)
    rows = conn.execute(VECTOR if vector_only else SEARCH, params).fetchall()
    latencies.append(time.perf_counter_ns() - t0)
    out = []
    for (mid,) in rows:
        dia = loaded["msg_to_dia"].get(mid)
        if dia and dia not in out:
            out.append(dia)
    return out


# The prompt's memories for a question (as prompt_context chooses them: memory_select_limit and the
# token budget), and the memories search ranks first, for the selection's quality.
SELECTIONS = {
    "select_memories, the question": (
        "select id from memory.select_memories(p_user_id => %(user)s, p_profile_id => %(profile)s, p_query => %(q)s)"),
    "select_memories, the question and its embedding": (
        "select id from memory.select_memories(p_user_id => %(user)s, p_profile_id => %(profile)s, p_query => %(q)s, "
        "p_query_embedding => %(e)s::extensions.vector)"),
    "search_memories, the question and its embedding (first 10)": (
        "select id from memory.search_memories(%(q)s, p_user_id => %(user)s, p_limit => 10, "
        "p_query_embedding => %(e)s::extensions.vector)"),
}


def _selection_hits(conn: Any, loaded: list[dict[str, Any]], questions: list[tuple[int, int, str, list[str]]],
                    embeddings: list[str]) -> dict[str, Any]:
    """For categories 1-4: the share of questions whose chosen memories hold one drawn from an
    evidence turn (hit), and how many memories were chosen on average."""
    sources = {}
    for lc in loaded:
        for mid, msg in conn.execute("select id, source_message_id from memory.memories where user_id = %s",
                                     (lc["user_id"],)).fetchall():
            sources[mid] = lc["msg_to_dia"].get(msg)
    hits: dict[str, list[float]] = defaultdict(list)
    chosen: dict[str, list[int]] = defaultdict(list)
    for (i, category, question, ev), embedding in zip(questions, embeddings, strict=True):
        if category == 5:
            continue
        args = {"user": loaded[i]["user_id"], "profile": loaded[i]["profile_id"], "q": question, "e": embedding}
        for name, sql in SELECTIONS.items():
            ids = [r[0] for r in conn.execute(sql, args).fetchall()]
            hits[name].append(1.0 if {sources.get(m) for m in ids} & set(ev) else 0.0)
            chosen[name].append(len(ids))
    return {name: {"questions": len(hits[name]), "hit": round(sum(hits[name]) / max(len(hits[name]), 1), 3),
                   "chosen": round(sum(chosen[name]) / max(len(chosen[name]), 1), 1)} for name in SELECTIONS}


def _drain(kind: str, users: list[str], **worker: Any) -> dict[str, int]:
    """Run the kit's worker on `users`' jobs of `kind` until a run finds none; outcomes counted.
    (A worker that runs embed jobs queues them itself before claiming.)"""
    from jobs.llm import LLMClient, LLMSettings
    from jobs.transport import PsycopgTransport
    from jobs.worker import Worker

    transport = PsycopgTransport.from_url(bench_url(), max_size=4)
    outcomes: dict[str, int] = defaultdict(int)
    try:
        while True:
            summary = Worker(transport, LLMClient(LLMSettings(provider="offline")), kinds=[kind], user_ids=users,
                             concurrency=2, **worker).run(once=True)
            if summary.fatal:
                raise RuntimeError(f"{kind} worker stopped: {summary.fatal}")
            if not summary.counts:
                break
            for (_, outcome), n in summary.counts.items():
                outcomes[outcome] += n
    finally:
        transport.close()
    return dict(outcomes)


def run() -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    from jobs.embeddings import EmbeddingClient
    from jobs.llm import LLMSettings

    from .e5 import DOCUMENT_PREFIX, E5, PACKAGE, QUERY_PREFIX, WEIGHTS_SHA256, serve

    path = LOCOMO_DIR / "locomo-dev.json"
    if not path.exists():
        return {"skipped": f"{path} not found"}
    samples = json.loads(path.read_text())
    samples = samples[: pick(2, len(samples))]
    data.reset_data()
    conn = service()
    adm = admin()
    # The real model behind the kit's own embeddings client, over loopback HTTP.
    model = E5()
    server, base_url = serve(model)
    embedder = EmbeddingClient(LLMSettings(provider="openai", base_url=base_url, api_key="loopback", timeout=600,
                                           env_prefix="SUPAMEM_EMBEDDING"),
                              query_prefix=QUERY_PREFIX, document_prefix=DOCUMENT_PREFIX)
    conn.execute("select memory.set_embedding_model(%s, %s)", (model.name, model.dimensions))
    context_chars = one(adm, "select (memory_private.setting('embedding_context_chars'))::integer")
    loaded = []
    t0 = time.perf_counter()
    for sample in samples:
        loaded.append(_load(conn, sample))
    for lc in loaded:
        adm.execute("update memory.messages as m set created_at = x.ts from unnest(%s::bigint[], %s::timestamptz[]) "
                    "as x (id, ts) where m.id = x.id", (lc["ids"], lc["dates"]))
    adm.execute("select memory_private.fold_search_terms(2147483647)")
    load_messages_s = round(time.perf_counter() - t0, 2)
    users = [lc["user_id"] for lc in loaded]
    t0 = time.perf_counter()
    embed_outcomes = _drain("embed", users, embedder=embedder)
    embed_s = round(time.perf_counter() - t0, 2)
    unembedded = one(adm, "select count(*) from memory.messages as m where m.user_id = any(%s::uuid[]) and not exists "
                          "(select 1 from memory_private.message_embeddings as e where e.message_id = m.id "
                          "and e.model = %s)", (users, model.name))
    evidence_stats = {"questions": 0, "evidence_ids": 0, "rewritten": 0, "dropped": 0, "questions_without_evidence": 0}
    questions = []  # (sample index, category, question, evidence)
    for i, (sample, lc) in enumerate(zip(samples, loaded, strict=True)):
        valid = set(lc["dia_to_msg"])
        for qa in sample["qa"]:
            evidence_stats["questions"] += 1
            evidence_stats["evidence_ids"] += len(qa.get("evidence") or [])
            ev, rewritten, dropped = normalise(qa.get("evidence") or [], valid)
            evidence_stats["rewritten"] += rewritten
            evidence_stats["dropped"] += dropped
            if not ev:
                evidence_stats["questions_without_evidence"] += 1
                continue
            questions.append((i, int(qa["category"]), qa["question"], ev))

    # BM25 over the same turn texts, one index per conversation.
    bm25_rows = []
    indexes = []
    for lc in loaded:
        dias = list(lc["texts"])
        indexes.append((dias, BM25Okapi([tokenize(lc["texts"][d]) for d in dias], k1=1.5, b=0.75)))
    for i, category, question, ev in questions:
        dias, bm25 = indexes[i]
        scores = bm25.get_scores(tokenize(question))
        order = sorted(range(len(dias)), key=lambda j: (-scores[j], j))[:20]
        bm25_rows.append((category, score([dias[j] for j in order], ev)))

    # The questions' vectors, through the same client (timed apart from the searches).
    t0 = time.perf_counter()
    vectors = embedder.embed([q for _, _, q, _ in questions], model=model.name, dimensions=model.dimensions,
                             purpose="query")
    query_embedding_ms = round((time.perf_counter() - t0) * 1000 / max(len(questions), 1), 2)
    embeddings = [str(v) for v in vectors]
    adm.execute("vacuum (analyze) memory.messages, memory_private.message_embeddings")

    def kit_pass(*, semantic: bool, lexical: bool = True) -> tuple[list[tuple[int, dict[str, float]]], list[int]]:
        rows, lat = [], []
        for (i, category, question, ev), embedding in zip(questions, embeddings, strict=True):
            ranked = _rank_kit(conn, loaded[i], question, embedding if semantic else None, lat, vector_only=not lexical)
            rows.append((category, score(ranked, ev)))
        return rows, lat

    kit_lexical, lat_lexical = kit_pass(semantic=False)
    kit_vector, lat_vector = kit_pass(semantic=True, lexical=False)
    kit_hybrid, lat_hybrid = kit_pass(semantic=True)

    # The kit's own extraction (the offline provider), its memories embedded, then hybrid again.
    adm.execute("update memory_private.settings set value = '100000' where key = 'extraction_rate_limit'")
    t1 = time.perf_counter()
    extract_outcomes = _drain("extract", users)
    embed_memories_outcomes = _drain("embed", users, embedder=embedder)
    extraction_s = round(time.perf_counter() - t1, 2)
    extracted = one(adm, "select count(*) from memory.memories where user_id = any(%s::uuid[])", (users,))
    adm.execute("vacuum (analyze) memory.memories, memory_private.memory_embeddings")
    kit_extraction, lat_extraction = kit_pass(semantic=True)
    selection_extraction = _selection_hits(conn, loaded, questions, embeddings)

    # Upper bound: the annotations instead of the extraction, through remember and its gate.
    adm.execute("delete from memory.memories where user_id = any(%s::uuid[])", (users,))
    counts: dict[str, int] = defaultdict(int)
    t1 = time.perf_counter()
    for sample, lc in zip(samples, loaded, strict=True):
        _observations(conn, sample, lc, counts)
    _drain("embed", users, embedder=embedder)
    load_memories_s = round(time.perf_counter() - t1, 2)
    adm.execute("vacuum (analyze) memory.memories, memory.messages, memory_private.memory_embeddings")
    oracle, lat_oracle = kit_pass(semantic=True)
    selection_observations = _selection_hits(conn, loaded, questions, embeddings)
    # The conversation nearest 600 turns, copied to 6,000 and 60,000.
    base = min(range(len(loaded)), key=lambda j: abs(len(loaded[j]["ids"]) - 600))
    scale = _latency_at_scale(adm, conn, loaded[base],
                              [e for (i, *_), e in zip(questions, embeddings, strict=True) if i == base],
                              [q for i, _, q, _ in questions if i == base])
    conn.execute("select memory.set_embedding_model(%s, %s)", ("offline-hash-384", 384))
    server.shutdown()
    conn.close()
    adm.close()
    out = {
        "conversations": [s["sample_id"] for s in samples],
        "messages": sum(len(lc["ids"]) for lc in loaded),
        "load_messages_seconds": load_messages_s,
        "load_memories_seconds": load_memories_s,
        "embedding_model": {"name": model.name, "dimensions": model.dimensions, "package": PACKAGE,
                            "weights_sha256": WEIGHTS_SHA256, "context_chars": context_chars, "embed_seconds": embed_s,
                            "embed_jobs": embed_outcomes,
                            "messages_left_without_a_vector": unembedded, "query_embedding_ms": query_embedding_ms},
        "extraction": {"provider": "offline", "seconds": extraction_s, "extract_jobs": extract_outcomes,
                       "embed_jobs": embed_memories_outcomes, "memories": extracted},
        "observations": dict(counts),
        "evidence": evidence_stats,
        "questions_scored": len(questions),
        "kit_lexical": aggregate(kit_lexical),
        "kit_vector": aggregate(kit_vector),
        "kit_hybrid": aggregate(kit_hybrid),
        "kit_hybrid_extraction": aggregate(kit_extraction),
        "oracle_memories": aggregate(oracle),
        "selection": {"the kit's offline extraction": selection_extraction,
                      "oracle memories (LoCoMo's observations)": selection_observations},
        "bm25": aggregate(bm25_rows),
        "search_latency": {"kit_lexical": summarize(lat_lexical), "kit_vector": summarize(lat_vector),
                           "kit_hybrid": summarize(lat_hybrid), "kit_hybrid_extraction": summarize(lat_extraction),
                           "oracle_memories": summarize(lat_oracle)},
        "latency_at_scale": scale,
    }
    k, h, b = out["kit_lexical"]["1-4"], out["kit_hybrid"]["1-4"], out["bm25"]["1-4"]
    log(f"locomo: recall@10 / MRR kit lexical {k['recall@10']} / {k['mrr']}, kit hybrid {h['recall@10']} / {h['mrr']}, "
        f"bm25 {b['recall@10']} / {b['mrr']}")
    return out


def _latency_at_scale(adm: Any, conn: Any, loaded: dict[str, Any], embeddings: list[str],
                      questions: list[str], rounds: int = 3) -> list[dict[str, Any]]:
    """Search latency for one user holding about 600, 6,000 and 60,000 turns: a conversation's
    turns copied into new conversations of a new user, with their vectors copied and jittered
    (1e-3 per coordinate, so HNSW does not see duplicates); its questions searched across the
    user's whole history (the HNSW path), lexical and hybrid. All three users are loaded first, then
    searched in rounds that go through every size, so each size is measured under the same
    conditions (a pass right after a load shares the machine with what the load left behind)."""
    out = []
    per_copy = len(loaded["ids"])
    users = []
    for copies in (1, 10, 100):
        uid = one(conn, "select memory.user_id_for(%s)", (f"locomo-scale-{copies}",))
        t0 = time.perf_counter()
        for _ in range(copies):
            cid = one(conn, "select (memory.create_conversation(p_user_id => %s)).id", (uid,))
            adm.execute(
                "insert into memory.messages (conversation_id, user_id, role, content) "
                "select %s, %s, m.role, m.content from memory.messages as m where m.conversation_id = %s order by m.id",
                (cid, uid, loaded["conversation_id"]))
        adm.execute(
            "insert into memory_private.message_embeddings (message_id, user_id, model, embedding) "
            "select c.id, c.user_id, e.model, (select array_agg(x + (random() - 0.5) * 0.002) "
            "from unnest(e.embedding::real[]) as x)::extensions.vector "
            "from memory.messages as c join memory.messages as o on o.conversation_id = %s and o.content = c.content "
            "and o.role = c.role join memory_private.message_embeddings as e on e.message_id = o.id "
            "where c.user_id = %s on conflict (message_id) do nothing",
            (loaded["conversation_id"], uid))
        adm.execute("delete from memory_private.jobs where user_id = %s", (uid,))
        adm.execute("delete from memory_private.pending_summaries where conversation_id in"
                    " (select id from memory.conversations where user_id = %s)", (uid,))
        # What the pg_cron jobs do within a minute: count the new messages' terms and post them
        # (which finds the user due vector lists past vector_lists_from), and build the lists; then
        # what autovacuum does after 50,000 new postings (the table's setting).
        adm.execute("select memory_private.fold_search_terms(2147483647)")
        t1 = time.perf_counter()
        adm.execute("call memory_private.run_vector_list_builds()")
        build_seconds = round(time.perf_counter() - t1, 2)
        lists = one(adm, "select lists from memory_private.vector_lists where user_id = %s", (uid,))
        adm.execute("vacuum (analyze) memory.messages, memory_private.message_embeddings, memory_private.search_terms, "
                    "memory_private.search_postings, memory_private.vector_list_entries")
        users.append((uid, {"turns": per_copy * copies, "load_seconds": round(time.perf_counter() - t0, 2),
                            "vector_lists": lists, "vector_list_build_seconds": build_seconds}))
    lat: dict[tuple[int, str], list[int]] = {}
    for _ in range(rounds):
        for i, (uid, _row) in enumerate(users):
            for name, semantic in (("lexical", False), ("hybrid", True)):
                for question, embedding in zip(questions, embeddings, strict=True):
                    t1 = time.perf_counter_ns()
                    conn.execute("select id from memory.search_messages(p_query => %s, p_user_id => %s, p_limit => 20, "
                                 "p_query_embedding => %s::extensions.vector)",
                                 (question, uid, embedding if semantic else None)).fetchall()
                    lat.setdefault((i, name), []).append(time.perf_counter_ns() - t1)
    for uid, row in users:
        row.update(_vector_side(conn, uid, embeddings))
    for i, (_uid, row) in enumerate(users):
        row.update({"rounds": rounds, "lexical": summarize(lat[(i, "lexical")]), "hybrid": summarize(lat[(i, "hybrid")])})
        log(f"locomo: {row['turns']} turns: search p50 lexical {row['lexical']['p50_us']} us, "
            f"hybrid {row['hybrid']['p50_us']} us")
        out.append(row)
    return out


def _vector_side(conn: Any, uid: Any, embeddings: list[str]) -> dict[str, Any]:
    """The vector side over a user's history on its own: its p50, and the share of the exact
    nearest 50 (every vector of the user compared) that it returns, over the questions."""
    times, found = [], 0
    for embedding in embeddings:
        t0 = time.perf_counter_ns()
        kit = {r[0] for r in conn.execute(
            "select message_id from memory_private.vector_messages(%s, %s::extensions.vector, null, 50)",
            (uid, embedding)).fetchall()}
        times.append(time.perf_counter_ns() - t0)
        exact = {r[0] for r in conn.execute(
            "select e.message_id from memory_private.message_embeddings as e "
            "where e.user_id = %s and e.model = memory_private.setting('embedding_model') ->> 0 "
            "order by e.embedding operator(extensions.<=>) %s::extensions.vector::extensions.halfvec, e.message_id "
            "limit 50", (uid, embedding)).fetchall()}
        found += len(kit & exact)
    out = {"vector": summarize(times), "vector_found_of_exact_50": round(found / (50 * len(embeddings)), 3)}
    # What the vector_list_probes lists nearest each question hold (read only where the price
    # chooses the lists), and the largest list.
    model = "memory_private.setting('embedding_model') ->> 0"
    lists = conn.execute(
        "select l.centroids is not null, (select max(n) from (select count(*) as n "
        "from memory_private.vector_list_entries as x where x.user_id = l.user_id and x.model = l.model "
        f"group by x.list_no) as s) from memory_private.vector_lists as l where l.user_id = %s and l.model = {model}",
        (uid,)).fetchone()
    if lists and lists[0]:
        read = [one(conn, "select count(*) from memory_private.vector_lists as l cross join lateral unnest("
                    "memory_private.nearest_centroids(l.centroids, %s::extensions.vector::extensions.halfvec, "
                    "memory_private.number_setting('vector_list_probes', 1)::integer)) as p (list_no) "
                    "join memory_private.vector_list_entries as x "
                    "on x.user_id = l.user_id and x.model = l.model and x.list_no = p.list_no "
                    f"where l.user_id = %s and l.model = {model}", (embedding, uid))
                for embedding in embeddings]
        out.update({"vector_list_largest": lists[1], "vector_list_read_mean": round(sum(read) / len(read))})
    return out
