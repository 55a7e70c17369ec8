"""The two ways the jobs reach the database give the same answers and the same errors.

`PsycopgTransport` talks to Postgres; `SupabaseTransport` is a real supabase-py client talking
to a loopback stand-in for the Data API (`tests/data_api_server.py`: PostgREST's RPC route with
JWT verification and `set local role`). The same jobs are processed end to end through each,
once in-process and once by a `supamem worker` process configured with SUPABASE_URL. The queue
is shared with the whole suite, so every claim names the test's own users (`p_user_ids`,
`--user`; tests/job_helpers.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from data_api_server import TEST_JWT_SECRET, DataAPIServer, mint_jwt
from job_helpers import JobKit

from jobs.handlers import make_llm
from jobs.transport import (
    PsycopgTransport,
    SupabaseTransport,
    Transport,
    transport_from_env,
)
from jobs.worker import Worker
from supamem.errors import (
    DatabaseUnavailableError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    StateError,
)

ROOT = Path(__file__).resolve().parent.parent
TURN = ("I live in Lisbon and I want to learn to surf.", "Lisbon has great beaches for that.")


@pytest.fixture(scope="module")
def data_api(database_url: str) -> Iterator[DataAPIServer]:
    with DataAPIServer(database_url) as server:
        yield server


@pytest.fixture
def psycopg_transport(database_url: str) -> Iterator[PsycopgTransport]:
    transport = PsycopgTransport.from_url(database_url, max_size=4)
    yield transport
    transport.close()


@pytest.fixture
def supabase_transport(data_api: DataAPIServer) -> Iterator[SupabaseTransport]:
    transport = SupabaseTransport(data_api.url, data_api.service_role_key)
    yield transport
    transport.close()


def _conversation(kit: JobKit, title: str | None = None) -> tuple[uuid.UUID, uuid.UUID]:
    """A new user with a primary profile and a one-turn conversation: (user id, conversation id)."""
    user_id, profile_id = kit.user()
    return user_id, kit.conversation(user_id, profile_id, [TURN], title)


def _outcome(kit: JobKit, user_id: uuid.UUID, conversation_id: uuid.UUID) -> dict[str, Any]:
    """What processing wrote, without ids and timestamps."""
    jobs = kit.jobs(user_id=user_id)
    memories = kit.rows(
        "select content, type, category, confidence, context from memory.memories where user_id = %s order by content",
        [user_id],
    )
    title = kit.value("select title from memory.conversations where id = %s", [conversation_id])
    return {
        "jobs": [
            (j["kind"], j["status"], j["attempts"], j["usage"],
             [r["outcome"] for r in j["result"]] if isinstance(j["result"], list) else sorted(j["result"]))
            for j in jobs
        ],
        "memories": memories,
        "title": title,
    }


# --- the same job through both ------------------------------------------------------------------


def test_same_jobs_same_results_through_both_transports(
    kit: JobKit, psycopg_transport: PsycopgTransport, supabase_transport: SupabaseTransport, data_api: DataAPIServer,
    database_url: str, tmp_path: Path,
) -> None:
    llm = make_llm({"SUPAMEM_LLM_PROVIDER": "offline"})
    outcomes = []
    for transport in (psycopg_transport, supabase_transport):
        user_id, conversation_id = _conversation(kit)
        assert len(kit.jobs(user_id=user_id)) == 2  # extract and title
        summary = Worker(transport, llm, kinds=["extract", "title"], concurrency=2, user_ids=[user_id]).run(once=True)
        assert summary.total("done") == 2, summary.table()
        outcomes.append(_outcome(kit, user_id, conversation_id))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0]["title"] and outcomes[0]["memories"]

    # A `supamem worker` process configured for the Data API does the same.
    user_id, conversation_id = _conversation(kit)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUPAMEM_LLM_", "DATABASE_URL"))}
    env.update(SUPABASE_URL=data_api.url, SUPABASE_SERVICE_ROLE_KEY=data_api.service_role_key,
               SUPAMEM_LLM_PROVIDER="offline", DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    before = len(data_api.requests)
    result = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "worker", "--once", "--kinds", "extract,title", "--user", str(user_id),
         "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kinds"] == {"extract": {"done": 1}, "title": {"done": 1}}
    assert _outcome(kit, user_id, conversation_id) == outcomes[0]
    served = {function for function, role, _ in data_api.requests[before:]}
    assert {"claim_jobs", "job_input", "finish_extraction", "finish_title"} <= served
    assert {role for _, role, _ in data_api.requests[before:]} == {"service_role"}


def test_each_rpc_returns_the_same_json(
    kit: JobKit, psycopg_transport: PsycopgTransport, supabase_transport: SupabaseTransport
) -> None:
    user_id, conversation_id = _conversation(kit, title="Already titled")
    (job,) = kit.jobs(user_id=user_id)
    worker = f"probe-{uuid.uuid4().hex[:6]}"
    (claimed,) = psycopg_transport.rpc(
        "claim_jobs",
        {"p_kinds": ["extract"], "p_worker": worker, "p_limit": 1, "p_lease": "60 seconds", "p_user_ids": [str(user_id)]},
    )
    assert claimed["id"] == job["id"] and claimed["user_id"] == str(user_id)
    assert set(claimed) == {"id", "kind", "payload", "user_id", "attempts", "leased_until"}
    # A set-returning function (a list), a jsonb scalar, a timestamptz scalar, a void function.
    calls = [
        ("job_input", {"p_job_id": job["id"], "p_worker": worker}),
        ("extend_lease", {"p_job_id": job["id"], "p_worker": worker, "p_lease": "60 seconds"}),
        ("job_stats", {}),
        ("user_id_for", {"p_external_id": kit.value("select external_id from memory.users where id = %s", [user_id])}),
    ]
    for function, params in calls:
        via_psycopg = psycopg_transport.rpc(function, params)
        via_supabase = supabase_transport.rpc(function, params)
        if function == "extend_lease":  # a new lease end each call, same shape
            assert isinstance(via_psycopg, str) and isinstance(via_supabase, str)
        elif function == "job_stats":  # the queue moves between the calls; compare the shape
            assert [sorted(r) for r in via_psycopg][:1] == [sorted(r) for r in via_supabase][:1]
        else:
            assert via_psycopg == via_supabase, function
    assert psycopg_transport.rpc("job_input", {"p_job_id": job["id"], "p_worker": worker})["user_message"] == TURN[0]
    assert supabase_transport.rpc("release_job", {"p_job_id": job["id"], "p_worker": worker}) is None
    assert kit.jobs(user_id=user_id)[0]["status"] == "queued"


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["psycopg", "supabase"])
def test_rpc_errors_come_back_typed(
    which: str, kit: JobKit, psycopg_transport: PsycopgTransport, supabase_transport: SupabaseTransport,
    data_api: DataAPIServer,
) -> None:
    transport: Transport = psycopg_transport if which == "psycopg" else supabase_transport
    with pytest.raises(NotFoundError) as missing:
        transport.rpc("extend_lease", {"p_job_id": -1, "p_worker": "nobody"})
    assert missing.value.sqlstate == "P0002" and "not found" in missing.value.message

    with pytest.raises(InvalidInputError) as invalid:
        transport.rpc("claim_jobs", {"p_kinds": ["extract"], "p_worker": "w", "p_limit": 0})
    assert invalid.value.sqlstate == "22023"

    with pytest.raises(NotFoundError) as unknown:
        transport.rpc("claim_jobs", {"p_kinds": ["extract"], "p_wrong_name": "w"})
    assert unknown.value.sqlstate == "PGRST202"

    # A job leased to another worker: the lease check refuses the write (55000).
    user_id, _ = _conversation(kit, title="Titled")
    (job,) = kit.jobs(user_id=user_id)
    (claimed,) = transport.rpc(
        "claim_jobs", {"p_kinds": ["extract"], "p_worker": "owner", "p_limit": 1, "p_user_ids": [str(user_id)]}
    )
    assert claimed["id"] == job["id"]
    with pytest.raises(StateError) as lost:
        transport.rpc("finish_extraction", {"p_job_id": job["id"], "p_worker": "intruder", "p_operations": []})
    assert lost.value.sqlstate == "55000" and "not leased to intruder" in lost.value.message
    assert lost.value.detail and "owner" in lost.value.detail
    assert kit.jobs(user_id=user_id)[0]["status"] == "running"
    transport.rpc("release_job", {"p_job_id": job["id"], "p_worker": "owner"})

    with pytest.raises(ValueError):
        transport.rpc("claim_jobs", {"kinds": ["extract"]})  # argument names are the functions' own

    if which == "supabase":
        statuses = {function: status for function, _, status in data_api.requests}
        # PostgREST's mapping: P0002 and 55000 are server-side (500), 22023 a bad request (400).
        assert statuses["extend_lease"] == 500 and statuses["finish_extraction"] == 500


def test_the_data_api_refuses_anon_and_bad_tokens(data_api: DataAPIServer) -> None:
    claim = {"p_kinds": ["extract"], "p_worker": "anon", "p_limit": 1}
    anon = SupabaseTransport(data_api.url, data_api.anon_key)
    with pytest.raises(PermissionDeniedError) as refused:
        anon.rpc("claim_jobs", claim)
    assert refused.value.sqlstate == "42501"
    assert data_api.requests[-1] == ("claim_jobs", "anon", 401)

    signed_in = SupabaseTransport(
        data_api.url, mint_jwt({"role": "authenticated", "sub": str(uuid.uuid4())}, TEST_JWT_SECRET)
    )
    with pytest.raises(PermissionDeniedError) as not_service:
        signed_in.rpc("claim_jobs", claim)
    assert not_service.value.sqlstate == "42501"  # claim_jobs is granted to service_role only
    assert data_api.requests[-1] == ("claim_jobs", "authenticated", 403)

    forged = SupabaseTransport(data_api.url, mint_jwt({"role": "service_role"}, "not-the-project-secret-" * 2))
    with pytest.raises(PermissionDeniedError) as bad_signature:
        forged.rpc("job_stats", {})
    assert bad_signature.value.message == "Invalid API key"  # the gateway's answer (HTTP 401)
    assert data_api.requests[-1] == ("job_stats", "?", 401)

    expired = SupabaseTransport(data_api.url, mint_jwt({"role": "service_role", "exp": 1}, TEST_JWT_SECRET))
    with pytest.raises(PermissionDeniedError) as too_late:
        expired.rpc("job_stats", {})
    assert too_late.value.sqlstate == "PGRST303"
    for transport in (anon, signed_in, forged, expired):
        transport.close()


def test_an_unreachable_data_api_is_unavailable(closed_port_url: str) -> None:
    port = closed_port_url.rsplit(":", 1)[1].split("/")[0]
    transport = SupabaseTransport(f"http://127.0.0.1:{port}", mint_jwt({"role": "service_role"}))
    with pytest.raises(DatabaseUnavailableError):
        transport.rpc("job_stats", {})


def test_transport_from_env_picks_the_data_api_when_configured(data_api: DataAPIServer, database_url: str) -> None:
    chosen = transport_from_env({"SUPABASE_URL": data_api.url, "SUPABASE_SERVICE_ROLE_KEY": data_api.service_role_key,
                                 "DATABASE_URL": database_url})
    assert isinstance(chosen, SupabaseTransport)
    assert isinstance(chosen.rpc("job_stats"), list)
    chosen.close()
    direct = transport_from_env({"DATABASE_URL": database_url})
    assert isinstance(direct, PsycopgTransport)
    assert isinstance(direct.rpc("job_stats"), list)
    direct.close()
    with pytest.raises(ValueError, match="SUPABASE_SERVICE_ROLE_KEY"):
        transport_from_env({"SUPABASE_URL": data_api.url})
    seed_001 = transport_from_env({"SUPABASE_URL": data_api.url, "SUPABASE_KEY": data_api.service_role_key})
    assert isinstance(seed_001, SupabaseTransport) and isinstance(seed_001.rpc("job_stats"), list), "seed 001's name"
    seed_001.close()
