"""What every workload shares: the benchmark database, connections, scale and logging.

The benchmarks run against their own cluster (port 54340 under `make bench`), never the shared
test database on 54322 where colleagues run tests: `bench_url()` refuses that port unless
BENCH_ALLOW_PORT_54322=1. Connections made here are plain psycopg connections:
- `service()` acts as Supabase's service_role (what an app server or a job uses; the kit's
  `supamem.Database` does the same `set role service_role`);
- `admin()` is the cluster's superuser (supabase_admin, as on Supabase's image; postgres is not
  one), used only to tune the server, generate data set-based and read plans.
Peers get their own plain connections as their documentation shows.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from scripts.migrate import ADMIN_ROLE

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO_ROOT / "bench"
PLOTS_DIR = BENCH_DIR / "plots"
RESULTS_JSON = BENCH_DIR / "results.json"
RESULTS_MD = BENCH_DIR / "RESULTS.md"
# The shared evaluation data lives beside the repository and is never copied into it.
LOCOMO_DIR = REPO_ROOT.parent / "shared" / "data" / "locomo"
DEFAULT_URL = "postgresql://postgres:postgres@127.0.0.1:54340/postgres"
SHARED_TEST_PORT = 54322

SCALE = os.environ.get("BENCH_SCALE", "full").strip().lower() or "full"
if SCALE not in ("small", "full"):
    raise SystemExit(f"BENCH_SCALE must be small or full, got {SCALE!r}")


def pick(small: Any, full: Any) -> Any:
    """The value for the current scale (BENCH_SCALE=small for a quick development run)."""
    return small if SCALE == "small" else full


def bench_url() -> str:
    url = os.environ.get("DATABASE_URL") or DEFAULT_URL
    port = str(conninfo_to_dict(url).get("port") or "5432")
    if port == str(SHARED_TEST_PORT) and os.environ.get("BENCH_ALLOW_PORT_54322") != "1":
        raise SystemExit(
            "refusing to benchmark the shared test database on port 54322; "
            "use `make bench` (its own cluster on 54340) or DATABASE_URL=...:54340/..."
        )
    return url


def connect(*, role: str | None = "service_role", autocommit: bool = True, prepare_threshold: int | None = 0,
            login: str | None = None, **kwargs: Any) -> psycopg.Connection:
    """A new connection (as `login`, else the URL's postgres); with `role`, it acts as that role
    for its whole session."""
    url = bench_url() if login is None else make_conninfo(bench_url(), user=login)
    conn = psycopg.connect(url, autocommit=autocommit, prepare_threshold=prepare_threshold,
                           application_name="supamem-bench", **kwargs)
    if role:
        conn.execute(f"set role {role}")  # a fixed identifier chosen here, never input
        if not autocommit:
            conn.commit()
    return conn


def service(**kwargs: Any) -> psycopg.Connection:
    return connect(role="service_role", **kwargs)


def admin(**kwargs: Any) -> psycopg.Connection:
    return connect(role=None, login=ADMIN_ROLE, **kwargs)


@contextmanager
def replica_mode(conn: psycopg.Connection) -> Iterator[None]:
    """Triggers (and FK checks) off for this session: only for set-based filler data, whose
    derived columns the caller fills itself."""
    conn.execute("set session_replication_role = replica")
    try:
        yield
    finally:
        conn.execute("set session_replication_role = origin")


@contextmanager
def paused_job(conn: psycopg.Connection, name: str) -> Iterator[None]:
    """The pg_cron job `name` inactive for the block (as a superuser), active again after."""
    toggle = "select cron.alter_job(j.jobid, active := %s) from cron.job as j where j.jobname = %s"
    conn.execute(toggle, [False, name])
    try:
        yield
    finally:
        conn.execute(toggle, [True, name])


_T0 = time.monotonic()


def log(message: str) -> None:
    print(f"[bench {time.monotonic() - _T0:7.1f}s] {message}", file=sys.stderr, flush=True)


class Timer:
    """`with Timer() as t: ...; t.seconds`"""

    def __enter__(self) -> Timer:
        self._t0 = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = round(time.perf_counter() - self._t0, 3)


def one(conn: psycopg.Connection, query: str, params: Any = None) -> Any:
    """The first column of the first row."""
    row = conn.execute(query, params).fetchone()
    return None if row is None else row[0]


def vacuum_analyze(*tables: str) -> None:
    with admin() as conn:
        for table in tables:
            conn.execute(f"vacuum (analyze) {table}")  # fixed table names from the caller


def kit_database(max_size: int = 10, **kwargs: Any) -> Any:
    """The kit's own client pool (`supamem.Database`), acting as service_role."""
    from supamem.db import Database

    return Database(bench_url(), min_size=1, max_size=max_size, open=True, **kwargs)
