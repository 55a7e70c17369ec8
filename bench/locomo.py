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
from .common import LOCOMO_DIR, admin, log, one, pick, service
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


def _rank_kit(conn: Any, loaded: dict[str, Any], question: str, latencies: list[int]) -> list[str]:
    t0 = time.perf_counter_ns()
    rows = conn.execute(
        "select id from memory.search_messages(p_query => %s, p_user_id => %s, p_conversation_id => %s, p_limit => 20)",
        (question, loaded["user_id"], loaded["conversation_id"])).fetchall()
    latencies.append(time.perf_counter_ns() - t0)
    out = []
    for (mid,) in rows:
        dia = loaded["msg_to_dia"].get(mid)
        if dia and dia not in out:
            out.append(dia)
    return out


def run() -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    path = LOCOMO_DIR / "locomo-dev.json"
    if not path.exists():
        return {"skipped": f"{path} not found"}
    samples = json.loads(path.read_text())
    samples = samples[: pick(2, len(samples))]
    data.reset_data()
    conn = service()
    adm = admin()
    loaded = []
    t0 = time.perf_counter()
    for sample in samples:
        loaded.append(_load(conn, sample))
    for lc in loaded:
        adm.execute("update memory.messages as m set created_at = x.ts from unnest(%s::bigint[], %s::timestamptz[]) "
                    "as x (id, ts) where m.id = x.id", (lc["ids"], lc["dates"]))
    load_messages_s = round(time.perf_counter() - t0, 2)
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

    def kit_pass() -> tuple[list[tuple[int, dict[str, float]]], list[int]]:
        rows, lat = [], []
        for i, category, question, ev in questions:
            rows.append((category, score(_rank_kit(conn, loaded[i], question, lat), ev)))
        return rows, lat

    kit_lexical, lat_lexical = kit_pass()
    counts: dict[str, int] = defaultdict(int)
    t1 = time.perf_counter()
    for sample, lc in zip(samples, loaded, strict=True):
        _observations(conn, sample, lc, counts)
    load_memories_s = round(time.perf_counter() - t1, 2)
    adm.execute("vacuum (analyze) memory.memories, memory.messages")
    oracle, lat_oracle = kit_pass()
    conn.close()
    adm.close()
    out = {
        "conversations": [s["sample_id"] for s in samples],
        "messages": sum(len(lc["ids"]) for lc in loaded),
        "load_messages_seconds": load_messages_s,
        "load_memories_seconds": load_memories_s,
        "observations": dict(counts),
        "evidence": evidence_stats,
        "questions_scored": len(questions),
        "kit_lexical": aggregate(kit_lexical),
        "oracle_memories": aggregate(oracle),
        "bm25": aggregate(bm25_rows),
        "search_latency": {"kit_lexical": summarize(lat_lexical), "oracle_memories": summarize(lat_oracle)},
    }
    k, b = out["kit_lexical"]["1-4"], out["bm25"]["1-4"]
    log(f"locomo: recall@10 kit lexical {k['recall@10']} (oracle memories {out['oracle_memories']['1-4']['recall@10']}) "
        f"vs bm25 {b['recall@10']}")
    return out
