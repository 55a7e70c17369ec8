# Local workflow. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SQL_LINT_PATHS := supabase/migrations

# The local stack (scripts/db.sh). `SUPAMEM_DB_PORT=54399 make test` runs a separate cluster;
# DATABASE_URL follows the port unless set explicitly (migrate.py refuses --bootstrap off-host).
SUPAMEM_DB_PORT ?= 54322
DATABASE_URL ?= postgresql://postgres:postgres@127.0.0.1:$(SUPAMEM_DB_PORT)/postgres
export SUPAMEM_DB_PORT DATABASE_URL

.PHONY: venv db db-stop db-reset test lint demo

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

# pytest (includes the pgTAP files via tests/test_pgtap.py), then the SQL linter.
# Both always run; the target fails if either failed.
test: venv db
	@status=0; \
	$(VENV)/bin/pytest || status=$$?; \
	$(VENV)/bin/sqlfluff lint $(SQL_LINT_PATHS) || status=$$?; \
	exit $$status

lint: venv
	$(VENV)/bin/sqlfluff lint $(SQL_LINT_PATHS)

demo: venv db
	$(PY) -m supamem.demo
