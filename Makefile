# Local workflow. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SQL_LINT_PATHS := supabase/schemas supabase/migrations
PY_LINT_PATHS := supamem supamem_server jobs tests scripts bench

# The local stack (scripts/db.sh). `SUPAMEM_DB_PORT=54399 make test` runs a separate cluster;
# DATABASE_URL follows the port unless set explicitly (migrate.py refuses --bootstrap off-host).
SUPAMEM_DB_PORT ?= 54322
DATABASE_URL ?= postgresql://postgres:postgres@127.0.0.1:$(SUPAMEM_DB_PORT)/postgres
export SUPAMEM_DB_PORT DATABASE_URL

.PHONY: venv db db-stop db-reset test lint demo serve browser bench migration schema-check

# Reinstall only when pyproject.toml is newer than the stamp, so repeated runs are fast.
venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# Start the local Postgres (idempotent) and apply bootstrap, pgTAP and pending migrations.
db: venv
	scripts/db.sh start
	$(PY) scripts/migrate.py --bootstrap --with-pgtap

db-stop:
	scripts/db.sh stop

db-reset: venv
	scripts/db.sh reset
	$(PY) scripts/migrate.py --bootstrap --with-pgtap

# supabase/schemas is the source of the database (scripts/schema.py). After editing it,
# `make migration name=what_it_changes` writes the migration that brings a database built by the
# migrations to what the schema files declare, for review. `make schema-check` fails when the two
# build different databases (make test checks it too, in tests/test_schema_files.py).
migration: venv
	@test -n "$(name)" || { echo "usage: make migration name=what_it_changes" >&2; exit 2; }
	$(PY) scripts/schema.py diff $(name)

schema-check: venv
	$(PY) scripts/schema.py check

# pytest (includes the pgTAP files via tests/test_pgtap.py), then the SQL and Python linters.
# All always run; the target fails if any failed.
test: venv db browser
	@status=0; \
	$(VENV)/bin/pytest || status=$$?; \
	$(MAKE) --no-print-directory lint || status=$$?; \
	exit $$status

lint: venv
	@status=0; \
	$(VENV)/bin/sqlfluff lint $(SQL_LINT_PATHS) || status=$$?; \
	$(VENV)/bin/ruff check $(PY_LINT_PATHS) || status=$$?; \
	exit $$status

# Debian's Chromium, for the page tests.
browser:
	scripts/browser.sh

demo: venv db
	$(PY) -m jobs.demo

# The HTTP app on http://127.0.0.1:8000 (the local stack, the offline LLM), signed in as a demo user.
serve: venv db
	$(PY) -m supamem_server --demo-user demo@supamem.local

# Benchmarks (never part of `make test`): their own cluster on BENCH_DB_PORT, wiped and tuned
# first (bench/server.py), stopped afterwards; peers come from the `bench` extra. Writes
# bench/RESULTS.md, bench/results.json and bench/plots/. BENCH_SCALE=small for a quick run;
# BENCH_ARGS='--only context,writes' for some workloads.
BENCH_DB_PORT ?= 54340
BENCH_URL := postgresql://postgres:postgres@127.0.0.1:$(BENCH_DB_PORT)/postgres

$(VENV)/.bench-installed: pyproject.toml $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	touch $@

bench: venv $(VENV)/.bench-installed
	@status=0; \
	SUPAMEM_DB_PORT=$(BENCH_DB_PORT) scripts/db.sh reset; \
	DATABASE_URL=$(BENCH_URL) $(PY) -m bench.server || status=$$?; \
	SUPAMEM_DB_PORT=$(BENCH_DB_PORT) scripts/db.sh stop; \
	SUPAMEM_DB_PORT=$(BENCH_DB_PORT) scripts/db.sh start; \
	if [ $$status -eq 0 ]; then \
		DATABASE_URL=$(BENCH_URL) $(PY) scripts/migrate.py --bootstrap || status=$$?; \
	fi; \
	if [ $$status -eq 0 ]; then \
		time DATABASE_URL=$(BENCH_URL) $(PY) -m bench $(BENCH_ARGS) || status=$$?; \
	fi; \
	SUPAMEM_DB_PORT=$(BENCH_DB_PORT) scripts/db.sh stop; \
	exit $$status
