"""Run every pgTAP file under supabase/tests with pg_prove, one pytest item per file.

This matches `supabase test db` (pg_prove, each file in its own session, alphabetical order).
Setup files (name starting with `000`, e.g. supabase/tests/000_setup.sql) install persistent
helpers; they sort first and run once (a session fixture) before any other file, so selecting
a single file with `-k` still works.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS_DIR = REPO_ROOT / "supabase" / "tests"
PG_PROVE_TIMEOUT_S = 600


def _is_setup(path: Path) -> bool:
    return path.name.startswith("000")


def _collect() -> list[Path]:
    files = [p for p in TESTS_DIR.rglob("*.sql") if p.is_file()]
    return sorted(files, key=lambda p: (not _is_setup(p), p.relative_to(REPO_ROOT).as_posix()))


PGTAP_FILES = _collect()


def _rel(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix()


def _pg_prove(path: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    pg_prove = shutil.which("pg_prove")
    if pg_prove is None:
        pytest.fail("pg_prove not found; run `scripts/db.sh start` (it installs it)", pytrace=False)
    params = conninfo_to_dict(database_url)
    cmd = [
        pg_prove,
        "--verbose",
        "--ext",
        ".sql",
        "-d",
        str(params.get("dbname", "postgres")),
        "-h",
        str(params.get("host", "127.0.0.1")),
        "-p",
        str(params.get("port", "5432")),
        "-U",
        str(params.get("user", "postgres")),
    ]
    psql = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"
    cmd += ["--psql-bin", psql, str(path)]
    env = dict(os.environ)
    if params.get("password"):
        env["PGPASSWORD"] = str(params["password"])
    return subprocess.run(
        cmd,
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=PG_PROVE_TIMEOUT_S,
        check=False,
    )


def _failure(path: Path, result: subprocess.CompletedProcess[str]) -> str | None:
    if result.returncode == 0:
        return None
    return (
        f"pg_prove {_rel(path)} exited {result.returncode}\n"
        f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
    )


@pytest.fixture(scope="session")
def pgtap_setup(database_url: str) -> dict[Path, str | None]:
    """Run the 000* setup files once, before any other pgTAP file; map each to its failure."""
    return {p: _failure(p, _pg_prove(p, database_url)) for p in PGTAP_FILES if _is_setup(p)}


def test_pgtap_files_exist() -> None:
    assert PGTAP_FILES, f"no pgTAP files (*.sql) under {_rel(TESTS_DIR)}: nothing would be tested"


@pytest.mark.parametrize("path", PGTAP_FILES, ids=[_rel(p) for p in PGTAP_FILES])
def test_pgtap(path: Path, database_url: str, pgtap_setup: dict[Path, str | None]) -> None:
    if _is_setup(path):
        failure = pgtap_setup[path]
    else:
        broken = [_rel(p) for p, f in pgtap_setup.items() if f is not None]
        if broken:
            pytest.fail(f"setup file(s) failed: {', '.join(broken)}", pytrace=False)
        failure = _failure(path, _pg_prove(path, database_url))
    if failure is not None:
        pytest.fail(failure, pytrace=False)
