#!/usr/bin/env bash
# Local, throwaway PostgreSQL 15 cluster that stands in for `supabase start` (which needs Docker).
#
#   scripts/db.sh start    initdb on first use, start, wait until ready, ensure the password
#   scripts/db.sh stop     fast shutdown (no-op when not running)
#   scripts/db.sh reset    stop, delete the cluster, start a fresh one (then re-run migrations)
#   scripts/db.sh status   exit 0 when running, 3 when not (like pg_ctl status)
#   scripts/db.sh url      print the connection URL (postgres)
#   scripts/db.sh admin-url  print the superuser's connection URL (supabase_admin)
#
# pgvector has no PostgreSQL 15 package in this Debian release: `start` builds Debian's own source
# package (from the next release's deb-src, fetched with a private apt configuration that leaves
# the system's sources alone) against postgresql-server-dev-15 and installs it, as Supabase ships
# `vector`. The download and build are cached in .supamem/pgvector.
#
# As on a hosted Supabase project, the superuser is `supabase_admin` (initdb's bootstrap user) and
# `postgres` is not a superuser: scripts/bootstrap.sql (loaded by migrate.py --bootstrap) creates
# it with Supabase's attributes, and migrations and tests run as it. `url` prints postgres' URL,
# `admin-url` the superuser's (the same password, local only).
#
# Environment: SUPAMEM_DB_PORT (default 54322), PGBIN (default /usr/lib/postgresql/15/bin).
#
# The cluster lives in <repo>/.supamem (git-ignored): pgdata/, run/ (unix socket), postgres.log;
# a non-default port gets <repo>/.supamem/port-<port>/ so several clusters can run side by side.
# As root, initdb/pg_ctl run as the `postgres` OS user (initdb refuses root). When `postgres`
# cannot reach <repo>/.supamem (e.g. the repo is under /root), or the socket path would be too
# long, the cluster lives in /tmp/supamem-<port> instead, and <repo>/.supamem/dataroot records it.
set -euo pipefail

REPO_ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
PORT="${SUPAMEM_DB_PORT:-54322}"
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "db.sh: SUPAMEM_DB_PORT must be a number" >&2; exit 2; }
PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}"
DEFAULT_PORT=54322
# The default port's cluster lives in .supamem; another port gets its own, so both can run.
if [[ "$PORT" == "$DEFAULT_PORT" ]]; then
    STATE_DIR="$REPO_ROOT/.supamem"
else
    STATE_DIR="$REPO_ROOT/.supamem/port-$PORT"
fi
DB_USER=postgres
DB_SUPERUSER=supabase_admin
DB_PASSWORD=postgres
DB_NAME=postgres
URL="postgresql://${DB_USER}:${DB_PASSWORD}@127.0.0.1:${PORT}/${DB_NAME}"
ADMIN_URL="postgresql://${DB_SUPERUSER}:${DB_PASSWORD}@127.0.0.1:${PORT}/${DB_NAME}"
EXT_DIR=/usr/share/postgresql/15/extension
APT_PACKAGES=(postgresql-15-cron postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl)
READY_TIMEOUT_S=60
PGVECTOR_VERSION=0.8.0
PGVECTOR_SUITE=trixie

log() { printf 'db.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# Run a command as the OS user that owns the cluster. `cd /` first: the caller's cwd may be
# unreadable for `postgres` (pg_ctl and initdb complain about that).
as_pg() {
    if is_root; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# ---------------------------------------------------------------------------------------------
# Packages
# ---------------------------------------------------------------------------------------------
ensure_packages() {
    local missing=()
    [[ -x "$PGBIN/initdb" ]] || missing+=(postgresql-15)
    [[ -f "$EXT_DIR/pg_cron.control" && -f "$EXT_DIR/pgtap.control" ]] \
        && command -v pg_prove >/dev/null 2>&1 \
        || missing+=("${APT_PACKAGES[@]}")
    ((${#missing[@]} == 0)) && return 0

    # Always ask for the full set: apt-get skips what is already installed.
    local pkgs=("${APT_PACKAGES[@]}")
    [[ " ${missing[*]} " == *" postgresql-15 "* ]] && pkgs=(postgresql-15 "${pkgs[@]}")
    if ! is_root; then
        log "missing PostgreSQL packages; install them with:"
        printf 'sudo apt-get update && sudo apt-get install -y %s\n' "${pkgs[*]}"
        exit 1
    fi
    log "installing ${pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y "${pkgs[@]}"; then
        log "install failed; running apt-get update and retrying"
        apt-get update
        apt-get install -y "${pkgs[@]}"
    fi
    [[ -x "$PGBIN/initdb" ]] || die "initdb still missing in $PGBIN after install"
    [[ -f "$EXT_DIR/pg_cron.control" ]] || die "pg_cron still missing after install"
    [[ -f "$EXT_DIR/pgtap.control" ]] || die "pgtap still missing after install"
    command -v pg_prove >/dev/null 2>&1 || die "pg_prove still missing after install"
}

# Build and install pgvector from Debian's source package (see the header). Installing the -dev
# package upgrades postgresql-15 to the same point release, so a running cluster is restarted.
ensure_pgvector() {
    [[ -f "$EXT_DIR/vector--$PGVECTOR_VERSION.sql" ]] && return 0
    if ! is_root; then
        log "pgvector $PGVECTOR_VERSION is missing; run this script once as root to build it"
        exit 1
    fi
    local work="$REPO_ROOT/.supamem/pgvector" restart=0
    mkdir -p "$work/lists/partial"
    if [[ ! -x /usr/lib/postgresql/15/bin/pg_config ]] || ! dpkg -s postgresql-server-dev-15 >/dev/null 2>&1; then
        resolve_data_root
        if is_running; then restart=1; cmd_stop >/dev/null; fi
        log "installing postgresql-server-dev-15 (to build pgvector)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-server-dev-15 make gcc >/dev/null \
            || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-server-dev-15 make gcc >/dev/null; }
    fi
    if [[ ! -f "$work/pgvector_$PGVECTOR_VERSION.orig.tar.gz" ]]; then
        local mirror
        mirror="$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/*$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)"
        printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
            "${mirror:-http://deb.debian.org/debian}" "$PGVECTOR_SUITE" >"$work/sources.list"
        local apt_private=(-o APT::Sandbox::User=root -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$work/lists")
        log "fetching Debian's pgvector source package ($PGVECTOR_SUITE)"
        apt-get -q "${apt_private[@]}" update >/dev/null
        (cd "$work" && apt-get -q "${apt_private[@]}" source --download-only "pgvector=$PGVECTOR_VERSION-1" >/dev/null 2>&1) \
            || die "could not download pgvector $PGVECTOR_VERSION source"
    fi
    log "building pgvector $PGVECTOR_VERSION"
    rm -rf "$work/build" && mkdir -p "$work/build"
    tar -xzf "$work/pgvector_$PGVECTOR_VERSION.orig.tar.gz" -C "$work/build" --strip-components=1
    # OPTFLAGS="": portable code, not tuned to this CPU.
    make -s -C "$work/build" PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config OPTFLAGS="" >/dev/null \
        && make -s -C "$work/build" PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config OPTFLAGS="" install >/dev/null \
        || die "pgvector build failed (in $work/build)"
    [[ -f "$EXT_DIR/vector--$PGVECTOR_VERSION.sql" ]] || die "pgvector still missing after install"
    if ((restart)); then cmd_start >/dev/null; fi
}

# ---------------------------------------------------------------------------------------------
# Where the cluster lives
# ---------------------------------------------------------------------------------------------
# Sets DATA_ROOT, PGDATA, RUN_DIR, LOG_FILE.
resolve_data_root() {
    mkdir -p "$STATE_DIR"
    if [[ -f "$STATE_DIR/dataroot" ]]; then
        DATA_ROOT="$(<"$STATE_DIR/dataroot")"
    else
        DATA_ROOT="$STATE_DIR"
        local reason=""
        if is_root; then
            chown postgres:postgres "$STATE_DIR"
            if ! runuser -u postgres -- test -x "$STATE_DIR" -a -w "$STATE_DIR"; then
                reason="user postgres cannot reach $STATE_DIR"
            fi
        fi
        # Unix socket paths are limited to 107 bytes.
        if [[ -z "$reason" ]] && ((${#STATE_DIR} + ${#PORT} + 20 > 100)); then
            reason="socket path under $STATE_DIR would be too long"
        fi
        if [[ -n "$reason" ]]; then
            DATA_ROOT="/tmp/supamem-$PORT"
            log "$reason; using $DATA_ROOT (recorded in $STATE_DIR/dataroot)"
            printf '%s\n' "$DATA_ROOT" >"$STATE_DIR/dataroot"
        fi
    fi
    PGDATA="$DATA_ROOT/pgdata"
    RUN_DIR="$DATA_ROOT/run"
    LOG_FILE="$DATA_ROOT/postgres.log"
}

prepare_data_root() {
    if [[ "$DATA_ROOT" != "$STATE_DIR" && -e "$DATA_ROOT" ]]; then
        # A fallback dir in /tmp must belong to the cluster owner, not to whoever made it first.
        local owner
        owner="$(stat -c %U "$DATA_ROOT")"
        if is_root; then
            [[ "$owner" == postgres ]] || die "$DATA_ROOT exists but is owned by $owner, not postgres"
        else
            [[ "$owner" == "$(id -un)" ]] || die "$DATA_ROOT exists but is owned by $owner"
        fi
    fi
    mkdir -p "$DATA_ROOT" "$RUN_DIR"
    chmod 700 "$DATA_ROOT" "$RUN_DIR"
    if is_root; then
        chown postgres:postgres "$DATA_ROOT" "$RUN_DIR"
        if [[ -e "$PGDATA" ]]; then chown -R postgres:postgres "$PGDATA"; fi
        touch "$LOG_FILE"
        chown postgres:postgres "$LOG_FILE"
    fi
}

# ---------------------------------------------------------------------------------------------
# Process state
# ---------------------------------------------------------------------------------------------
pid_from_file() { [[ -f "$PGDATA/postmaster.pid" ]] && head -n1 "$PGDATA/postmaster.pid" || true; }

# True when $1 is a live process whose cwd is our data dir (every postgres process chdirs there),
# so a recycled pid that now belongs to something else does not count as "running".
is_our_process() {
    local pid="$1" cwd
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    cwd="$(readlink "/proc/$pid/cwd" 2>/dev/null || true)"
    [[ "$cwd" == "$(cd "$PGDATA" && pwd -P)" ]]
}

is_running() {
    [[ -d "$PGDATA" ]] || return 1
    is_our_process "$(pid_from_file)"
}

# Processes (orphaned backends) still attached to the data dir.
pids_using_pgdata() {
    local real proc
    real="$(cd "$PGDATA" && pwd -P)"
    for proc in /proc/[0-9]*; do
        [[ "$(readlink "$proc/cwd" 2>/dev/null || true)" == "$real" ]] && printf '%s ' "${proc#/proc/}"
    done
    return 0
}

# postmaster.pid left by a crash or kill -9. Postgres removes a stale lock itself unless the pid
# was recycled; remove it here so a recycled pid cannot block the start. Wait (bounded) for
# orphaned children first: deleting the lock file while they run would defeat Postgres'
# shared-memory interlock.
remove_stale_pidfile() {
    [[ -f "$PGDATA/postmaster.pid" ]] || return 0
    local i left
    for ((i = 0; i < 100; i++)); do
        left="$(pids_using_pgdata)"
        [[ -z "$left" ]] && break
        sleep 0.1
    done
    [[ -z "$left" ]] || die "stale postmaster.pid, but processes $left still use $PGDATA; stop them first"
    log "removing stale postmaster.pid (pid $(pid_from_file) is not a live postmaster of this cluster)"
    rm -f "$PGDATA/postmaster.pid"
    local lock
    for lock in "$RUN_DIR"/.s.PGSQL.*.lock; do
        [[ -e "$lock" ]] || continue
        is_our_process "$(head -n1 "$lock")" || rm -f "$lock"
    done
}

# ---------------------------------------------------------------------------------------------
# Cluster
# ---------------------------------------------------------------------------------------------
init_cluster() {
    log "initializing cluster in $PGDATA"
    local locale_args=(--no-locale)
    if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then locale_args=(--locale=C.UTF-8); fi
    as_pg "$PGBIN/initdb" -D "$PGDATA" -U "$DB_SUPERUSER" -E UTF8 "${locale_args[@]}" \
        --auth-local=trust --auth-host=scram-sha-256 >>"$LOG_FILE" 2>&1 \
        || { tail -n 30 "$LOG_FILE" >&2; die "initdb failed (log: $LOG_FILE)"; }
    # Settings that never change go here; per-start settings go to supamem.conf (write_conf).
    as_pg sh -c "cat >>'$PGDATA/postgresql.conf'" <<'EOF'

# --- supamem local stack (scripts/db.sh) ---
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.timezone = 'UTC'
max_connections = 200
fsync = on
timezone = 'UTC'
log_timezone = 'UTC'
log_min_messages = warning
password_encryption = 'scram-sha-256'
include_if_exists = 'supamem.conf'
EOF
}

# Rewritten on every start, so SUPAMEM_DB_PORT and the socket dir follow the current call.
write_conf() {
    as_pg sh -c "cat >'$PGDATA/supamem.conf'" <<EOF
# written by scripts/db.sh on every start; do not edit
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$RUN_DIR'
# pg_cron runs its jobs over the socket, where local connections are trusted.
cron.host = '$RUN_DIR'
# Its minutely jobs wrote two log lines each per run, a log that grew by gigabytes on a long-
# running stack; each run is still recorded in cron.job_run_details.
cron.log_statement = off
EOF
}

psql_local() {
    as_pg "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$RUN_DIR" -p "$PORT" -U "$DB_SUPERUSER" -d "$DB_NAME" "$@"
}

wait_ready() {
    local i
    for ((i = 0; i < READY_TIMEOUT_S * 5; i++)); do
        if "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -d "$DB_NAME" -t 1; then return 0; fi
        is_running || { tail -n 30 "$LOG_FILE" >&2; die "postgres exited during startup (log: $LOG_FILE)"; }
        sleep 0.2
    done
    tail -n 30 "$LOG_FILE" >&2
    die "postgres not ready after ${READY_TIMEOUT_S}s (log: $LOG_FILE)"
}

cmd_start() {
    ensure_packages
    ensure_pgvector
    resolve_data_root
    if is_running; then
        wait_ready
        echo "already running (pid $(pid_from_file)) at $URL"
        return 0
    fi
    prepare_data_root
    [[ -f "$PGDATA/PG_VERSION" ]] || { rm -rf "$PGDATA"; init_cluster; }
    remove_stale_pidfile
    write_conf
    as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$LOG_FILE" -w -t "$READY_TIMEOUT_S" start >/dev/null \
        || { tail -n 30 "$LOG_FILE" >&2; die "pg_ctl start failed (log: $LOG_FILE)"; }
    wait_ready
    # A cluster from before the Supabase-shaped stack has a superuser postgres and no supabase_admin.
    psql_local -c "select" >/dev/null 2>&1 \
        || die "this cluster has no $DB_SUPERUSER superuser (it predates the Supabase-shaped local stack); \`make db-reset\` rebuilds it"
    # Same credentials as Supabase's local stack; trust on the socket lets us (re)set it.
    psql_local -c "alter role $DB_SUPERUSER with password '$DB_PASSWORD'"
    echo "started (pid $(pid_from_file)) at $URL"
}

cmd_stop() {
    resolve_data_root
    if ! is_running; then
        echo "not running"
        return 0
    fi
    as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t "$READY_TIMEOUT_S" stop >/dev/null
    echo "stopped"
}

cmd_reset() {
    cmd_stop
    resolve_data_root
    log "deleting $PGDATA"
    rm -rf "$PGDATA"
    cmd_start
}

cmd_status() {
    resolve_data_root
    if is_running; then
        echo "running (pid $(pid_from_file)) at $URL; data: $PGDATA; log: $LOG_FILE"
        return 0
    fi
    echo "not running; data: $PGDATA"
    return 3
}

usage() {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    reset) cmd_reset ;;
    status) cmd_status ;;
    url) echo "$URL" ;;
    admin-url) echo "$ADMIN_URL" ;;
    -h | --help | help) usage ;;
    *)
        usage >&2
        exit 2
        ;;
esac
