"""The one module that owns database connections.

`Database` wraps a `psycopg_pool.ConnectionPool`. Every connection it hands out acts as
Supabase's `service_role` (the pool's `configure` callback runs `set role service_role`), so
grants and row level security are those of the app server's service key, never those of the
superuser the server may log in as. `Database.as_user()` instead acts, for one transaction, as a
signed-in Supabase Auth user (`set local role authenticated` plus `request.jwt.claims`), exactly
as PostgREST does with a user's JWT.

Python calls the RPC functions in schema `memory`; `call()` builds
`select * from memory.<fn>(p_x => $1, ...)` from quoted identifiers (the function and argument names)
(psycopg.sql), with every value sent as a server-side parameter.

Connection handling:
- the pool opens lazily on first use, waiting up to `connect_timeout` for `min_size`
  connections (after one direct connection attempt: a server that refuses it is down, and the
  first call fails at once, as the calls after a failure do); connections that died (a database
  restart) are replaced when they are checked out: `transaction()` pings its connection first,
  a single call pings one idle for more than `check_idle` seconds and retries once a statement
  a shutdown cut off (it did not commit);
- connections are in autocommit: a single RPC call (`call`, `call_one`, `call_value`) is one
  statement and one round trip, atomic on its own; `transaction()` opens an explicit one;
- when no connection can be had within `timeout`, or a broken connection is followed by a
  direct connection attempt the server refuses (the database is down), the pool is retired
  and calls fail at once with `DatabaseUnavailableError` (the fallback answers in microseconds)
  while one background thread tries a fresh pool every `retry_interval` seconds (each try
  waiting up to `connect_timeout`); the first call after it succeeded uses the new pool, and no
  caller ever waits on a reconnect. `wait_available()` blocks until then. A connection that
  breaks in the middle of a transaction fails only that call; the pool replaces it;
- with a `deadline`, a checkout (a call, a transaction) that holds its connection for longer is
  cut (supamem.deadline): a server that stopped answering, behind a network partition or a
  stalled proxy, fails the call at once with `DatabaseUnavailableError` instead of after TCP's
  quarter of an hour; when a new connection cannot be made either, the pool is retired as when
  the server is down.

Supavisor: `set role` in `configure` is session state, so use a direct connection or Supavisor's
session mode (port 5432). Behind transaction mode (port 6543) pass `prepare_threshold=None`
and `role_per_transaction=True`, which sets the role with `set local` in every transaction.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar
from uuid import UUID

import psycopg
from psycopg import pq, sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb, set_json_loads
from psycopg_pool import ConnectionPool
from pydantic_core import from_json

from .deadline import Deadline
from .errors import DatabaseUnavailableError, SupamemError, from_psycopg

log = logging.getLogger(__name__)


def _json_loads(data: str | bytes) -> Any:
    """pydantic's parser, and the standard library's for what it refuses: it stops at 200 levels of
    nesting. The kit's writers refuse JSON nested past 64; a row stored deeper by other means (raw
    SQL) is read up to about 1,000 levels, where the standard library stops too."""
    try:
        return from_json(data)
    except ValueError:
        return json.loads(data)

DEFAULT_DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:54322/postgres"
SCHEMA = "memory"

#: SQLSTATEs of a backend terminated by a shutdown or restart: the statement did not commit.
_TERMINATED = frozenset({"57P01", "57P02", "57P03"})
# PostgREST applies the settings of the role it impersonates to each request's transaction; on
# Supabase that is how anon's 3 s and authenticated's 8 s statement timeouts take effect.
# `%(role)s` is the role's name, as a parameter.
ROLE_SETTINGS_SQL = """(select count(set_config(split_part(c, '=', 1), substr(c, strpos(c, '=') + 1), true))
    from pg_catalog.pg_db_role_setting as s cross join unnest(s.setconfig) as c
    where s.setrole = %(role)s::regrole
        and s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database())))"""
T = TypeVar("T")

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,60}$")


def database_url() -> str:
    """`$DATABASE_URL`, else the local stack (`scripts/db.sh`) on `$SUPAMEM_DB_PORT` (54322)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    port = os.environ.get("SUPAMEM_DB_PORT", "").strip()
    if not port:
        return DEFAULT_DATABASE_URL
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"SUPAMEM_DB_PORT must be a port number, not {port!r}")
    return DEFAULT_DATABASE_URL.replace(":54322/", f":{int(port)}/")


def _adapt(value: Any) -> Any:
    # jsonb parameters: a dict is always a JSON object. Lists are left alone (they may be
    # Postgres arrays such as uuid[]); wrap a JSON array in psycopg's Jsonb yourself.
    if isinstance(value, Mapping):
        return Jsonb(dict(value))
    return value


@functools.lru_cache(maxsize=512)
def _rpc_query(function: str, names: tuple[str, ...]) -> str:
    """`select * from memory.<function>(p_<name> => %(name)s, ...)`, composed once per function and
    parameter names: composing it took a third of the client's own time on every call."""
    # Names are quoted identifiers, values server-side parameters: nothing is string-built.
    if not _IDENTIFIER.match(function):
        raise ValueError(f"invalid function name {function!r}")
    args = []
    for name in names:
        if not _IDENTIFIER.match(name):
            raise ValueError(f"invalid parameter name {name!r}")
        args.append(sql.SQL("{} => {}").format(sql.Identifier(f"p_{name}"), sql.Placeholder(name)))
    return sql.SQL("select * from {}.{}({})").format(
        sql.Identifier(SCHEMA), sql.Identifier(function), sql.SQL(", ").join(args)
    ).as_string(None)


class Transaction:
    """One open transaction on one pooled connection; calls RPCs and maps errors."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self.conn = conn

    def call(self, function: str, /, **params: Any) -> list[dict[str, Any]]:
        """`select * from memory.<function>(p_<name> => <value>, ...)`; rows as dicts."""
        query = _rpc_query(function, tuple(params))
        values = {name: _adapt(value) for name, value in params.items()}
        return self.execute(query, values)

    def call_one(self, function: str, /, **params: Any) -> dict[str, Any] | None:
        rows = self.call(function, **params)
        return rows[0] if rows else None

    def call_value(self, function: str, /, **params: Any) -> Any:
        """The first column of the first row (functions that return a scalar)."""
        row = self.call_one(function, **params)
        return None if row is None else next(iter(row.values()), None)

    def execute(
        self, query: str | sql.Composable, params: Mapping[str, Any] | tuple | list | None = None
    ) -> list[dict[str, Any]]:
        """A parameterised statement (the few direct reads/writes the RPCs do not cover)."""
        try:
            cur = self.conn.execute(query, params)  # type: ignore[arg-type]
            # The result's status, not `cur.description`, which builds a Column for every field.
            res = cur.pgresult
            return cur.fetchall() if res is not None and res.status == pq.ExecStatus.TUPLES_OK else []
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested transaction: an error inside rolls back only what ran inside it."""
        try:
            with self.conn.transaction():
                yield
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc


class Database:
    """A pool of connections acting as service_role, plus RPC helpers.

    Args:
        url: libpq URL; default `$DATABASE_URL`, else the local stack.
        min_size / max_size: pool bounds (max_size bounds concurrent transactions).
        timeout: seconds a caller waits for a free connection before `DatabaseUnavailableError`.
        connect_timeout: seconds to open the pool (and libpq's per-connection connect timeout).
        retry_interval: after a "database unavailable" failure, seconds between the background
            reconnect attempts (calls fail fast meanwhile).
        open: open the pool now (raising `DatabaseUnavailableError` if it cannot) instead of on
            first use.
        prepare_threshold: psycopg's; None disables server-side prepared statements
            (Supavisor transaction mode).
        role_per_transaction: set `service_role` with `set local` in each transaction instead of
            once per connection (Supavisor transaction mode).
        check_idle: a connection idle for longer than this many seconds is pinged on checkout
            (one that was just used is not, which saves a round trip per call).
        deadline: seconds a call or transaction may hold its connection before it is cut and the
            call fails with `DatabaseUnavailableError` (the server stopped answering); None waits
            as long as TCP does. Set it above the server's `statement_timeout`, so that a slow
            statement is cancelled by the server first. The pool is retired only when a new
            connection cannot be made within `connect_timeout` either.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 5.0,
        connect_timeout: float = 5.0,
        retry_interval: float = 1.0,
        open: bool = False,  # noqa: A002 - mirrors psycopg_pool's argument name
        prepare_threshold: int | None = 5,
        role_per_transaction: bool = False,
        application_name: str = "supamem",
        check_idle: float = 5.0,
        deadline: float | None = None,
    ) -> None:
        self.url = url or database_url()
        self.min_size = min_size
        self.max_size = max_size
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.retry_interval = retry_interval
        self.prepare_threshold = prepare_threshold
        self.role_per_transaction = role_per_transaction
        self.application_name = application_name
        self.check_idle = check_idle
        self._deadline = Deadline(deadline) if deadline is not None else None
        self._last_used: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = weakref.WeakKeyDictionary()
        self._pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] | None = None
        self._lock = threading.Lock()
        self._closed = False
        # Set while a pool is up; cleared (and a reconnect thread started) when it fails.
        self._available = threading.Event()
        self._reconnecting: threading.Thread | None = None
        self._stopping = threading.Event()
        if open:
            self.open()

    # -- pool lifecycle -------------------------------------------------------------------

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.prepare_threshold = self.prepare_threshold
        # Every message row carries jsonb columns: the standard library's parser took about a third
        # of the client's time reading a 20-message window, pydantic's parser a sixth of that.
        set_json_loads(_json_loads, conn)
        if not self.role_per_transaction:
            conn.execute("set role service_role")

    def _new_pool(self) -> ConnectionPool[psycopg.Connection[dict[str, Any]]]:
        return ConnectionPool(
            self.url,
            min_size=self.min_size,
            max_size=self.max_size,
            open=False,
            timeout=self.timeout,
            configure=self._configure,
            name="supamem",
            kwargs={
                "row_factory": dict_row,
                # One statement is its own transaction; transaction() opens explicit ones.
                "autocommit": True,
                "connect_timeout": max(1, round(self.connect_timeout)),
                "application_name": self.application_name,
            },
        )

    def open(self) -> None:
        """Open the pool, waiting up to `connect_timeout` for its first connections."""
        self._get_pool()

    def _get_pool(self) -> ConnectionPool[psycopg.Connection[dict[str, Any]]]:
        if self._closed:
            raise DatabaseUnavailableError("database client is closed")
        pool = self._pool
        if pool is not None:
            return pool
        with self._lock:
            if self._pool is not None:
                return self._pool
            if self._reconnecting is not None:
                raise DatabaseUnavailableError("database unavailable (reconnecting in the background)")
            # The first open: the caller waits for it, once; but a server that refuses a direct
            # connection is down, and a process started during an outage answers at once instead
            # of waiting `connect_timeout` for a pool that cannot open.
            refused = self._refusal()
            if refused is not None:
                self._start_reconnect()
                raise DatabaseUnavailableError(f"cannot connect to the database: {refused}")
            pool = self._new_pool()
            try:
                pool.open(wait=True, timeout=self.connect_timeout)
            except Exception as exc:  # PoolTimeout (the pool closed itself) or worse
                pool.close(timeout=0)
                self._start_reconnect()
                raise DatabaseUnavailableError(
                    f"cannot connect to the database within {self.connect_timeout}s: {exc}"
                ) from exc
            self._install(pool)
            return pool

    def _install(self, pool: ConnectionPool[Any]) -> None:
        self._pool = pool
        self._reconnecting = None
        self._available.set()

    def _start_reconnect(self) -> None:
        """One background thread tries a new pool every `retry_interval` seconds (lock held)."""
        self._available.clear()
        if self._reconnecting is None:
            self._reconnecting = threading.Thread(target=self._reconnect, name="supamem-reconnect", daemon=True)
            self._reconnecting.start()

    def _reconnect(self) -> None:
        while not self._stopping.wait(self.retry_interval):
            pool = self._new_pool()
            try:
                pool.open(wait=True, timeout=self.connect_timeout)
            except Exception:  # noqa: BLE001 - still down: try again after retry_interval
                pool.close(timeout=0)
                continue
            with self._lock:
                if not self._closed:
                    self._install(pool)
                    log.info("database reachable again", extra={"supamem_operation": "reconnect"})
                    return
            pool.close()  # closed while this pool opened
            return

    def wait_available(self, timeout: float | None = None) -> bool:
        """Block until a pool is up (True), or `timeout` seconds passed (False)."""
        return self._available.wait(timeout)

    def _retire(self, pool: ConnectionPool[Any] | None) -> None:
        """Drop a pool that failed and reconnect in the background."""
        with self._lock:
            if pool is None or self._pool is not pool:
                return  # another caller retired it already (and a new one may be up)
            self._pool = None
            self._start_reconnect()
        # Closing waits for its worker threads; do not make the failing caller wait for it.
        threading.Thread(target=pool.close, kwargs={"timeout": 1.0}, daemon=True).start()

    @property
    def is_open(self) -> bool:
        return self._pool is not None

    @property
    def is_down(self) -> bool:
        """Known to be unreachable: a reconnect is running (a pool not opened yet is not down)."""
        return self._closed or self._reconnecting is not None

    def close(self) -> None:
        self._closed = True
        self._stopping.set()
        if self._deadline is not None:
            self._deadline.close()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ---------------------------------------------------------------------

    def _getconn(self, pool: ConnectionPool[Any], idle: float) -> psycopg.Connection[dict[str, Any]]:
        """A connection, pinged first when it sat idle for more than `idle` seconds; one that
        fails the ping (killed by a restart) is handed back, and the pool replaces it."""
        for _ in range(self.max_size + 1):
            conn = pool.getconn()
            if time.monotonic() - self._last_used.get(conn, 0.0) <= idle:
                return conn
            try:
                with self._watched(pool, conn):
                    conn.execute("")
                return conn
            except DatabaseUnavailableError:  # the deadline passed: the pool is retired
                pool.putconn(conn)
                raise
            except psycopg.Error:
                pool.putconn(conn)
                if self._refusal() is not None:  # do not wait `timeout` for a pool that cannot connect
                    raise psycopg.OperationalError("the database does not answer") from None
        return pool.getconn()

    def _watched(self, pool: ConnectionPool[Any], conn: psycopg.Connection[Any]) -> AbstractContextManager[None]:
        """The work done on `conn`, cut at the deadline; without one, nothing is added to the call."""
        return nullcontext() if self._deadline is None else self._cut_at(self._deadline, pool, conn)

    @contextmanager
    def _cut_at(self, deadline: Deadline, pool: ConnectionPool[Any], conn: psycopg.Connection[Any]) -> Iterator[None]:
        """The work done on `conn`, cut at `deadline`: the server stopped answering. When it does
        not take a new connection either, the pool is retired and calls fail at once until a new
        one connects."""
        watch = None
        try:
            with deadline.watching(conn) as watch:
                yield
        except (psycopg.Error, SupamemError) as exc:
            if watch is None or not watch.cut:
                raise
            # One slow checkout (several statements, each within the server's statement_timeout)
            # is not an outage: the pool goes only when a new connection cannot be made either.
            if self._refusal() is not None:
                self._retire(pool)
            raise DatabaseUnavailableError(
                f"database unavailable: no answer within the {deadline.seconds:g}s deadline"
            ) from exc
        if watch is not None and watch.cut:  # answered as it was cut: the pool must not hand out a dead connection
            conn.close()

    def _refusal(self) -> str | None:
        """One direct connection attempt: None when it connects, else why not (a server that is
        down refuses it at once)."""
        try:
            psycopg.connect(self.url, connect_timeout=max(1, round(self.connect_timeout)),
                            application_name=self.application_name).close()
            return None
        except psycopg.Error as exc:
            return str(exc).strip() or type(exc).__name__

    @contextmanager
    def _checkout(self, *, idle: float) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        pool = self._get_pool()
        try:
            conn = self._getconn(pool, idle)
        except psycopg.Error as exc:  # no connection within `timeout`: the database is down
            self._retire(pool)
            raise from_psycopg(exc) from exc
        # A connection that breaks mid-call fails only this call (as DatabaseUnavailableError);
        # putconn discards it and the next checkout decides.
        try:
            with self._watched(pool, conn):
                yield conn
            self._last_used[conn] = time.monotonic()
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc
        finally:
            pool.putconn(conn)

    @contextmanager
    def transaction(
        self, *, as_user: UUID | str | None = None, claims: Mapping[str, Any] | None = None
    ) -> Iterator[Transaction]:
        """One transaction acting as service_role, or as a signed-in user: `as_user` (claims
        `sub` and `role`), or the verified `claims` of their access token, all of them, as
        PostgREST passes them (`auth.jwt()` reads the rest).

        Commits when the block ends, rolls back on an exception. psycopg and pool errors come
        out as `SupamemError` subclasses.
        """
        if as_user is not None:
            claims = {"sub": str(UUID(str(as_user))), "role": "authenticated"}
        # A connection used moments ago is not pinged (a round trip: about 200 us of a 1.5 ms
        # signed-in call); one a restart killed fails at BEGIN, before any work, and the
        # transaction starts again on a connection that answers a ping.
        for attempt in (1, 2):
            began = False
            try:
                with self._checkout(idle=self.check_idle if attempt == 1 else 0.0) as conn, conn.transaction():
                    began = True
                    if claims is not None:
                        conn.execute(
                            "select set_config('role', 'authenticated', true),"
                            " set_config('request.jwt.claims', %(claims)s, true),"
                            f" {ROLE_SETTINGS_SQL}",
                            {"claims": json.dumps(dict(claims)), "role": "authenticated"},
                        )
                    elif self.role_per_transaction:
                        conn.execute("set local role service_role")
                    yield Transaction(conn)
                return
            except DatabaseUnavailableError as exc:
                if began or not self._retry_after(exc, attempt):
                    raise

    def _single(self, work: Callable[[Transaction], T]) -> T:
        """Run one RPC call as one statement: atomic on its own, so no BEGIN/COMMIT round trips,
        and no ping of a connection used moments ago. A statement cut off by a server shutdown
        or restart (57P01-57P03) cannot have committed, so it is tried once more on a fresh
        connection."""
        if self.role_per_transaction:  # the role must be set inside a transaction
            with self.transaction() as tx:
                return work(tx)
        for attempt in (1, 2):
            try:
                with self._checkout(idle=self.check_idle if attempt == 1 else 0.0) as conn:
                    return work(Transaction(conn))
            except DatabaseUnavailableError as exc:
                if not self._retry_after(exc, attempt):
                    raise
        raise AssertionError("unreachable")

    def _retry_after(self, exc: DatabaseUnavailableError, attempt: int) -> bool:
        """Whether work cut off by a server shutdown or restart (57P01-57P03) before it could
        commit runs once more, on a connection pinged first (a restart killed every connection of
        the pool): not when the server is down (the pool is retired and reconnects behind)."""
        if attempt == 2 or exc.sqlstate not in _TERMINATED:
            return False
        if self._refusal() is not None:
            self._retire(self._pool)
            return False
        return True

    def as_user(self, user_id: UUID | str) -> Any:
        """`with db.as_user(uid) as tx:` — a transaction acting as that Supabase Auth user."""
        return self.transaction(as_user=user_id)

    # -- one-call helpers -----------------------------------------------------------------

    def call(self, function: str, /, **params: Any) -> list[dict[str, Any]]:
        """Call `memory.<function>` as service_role (one statement, atomic); rows as dicts."""
        return self._single(lambda tx: tx.call(function, **params))

    def call_one(self, function: str, /, **params: Any) -> dict[str, Any] | None:
        return self._single(lambda tx: tx.call_one(function, **params))

    def call_value(self, function: str, /, **params: Any) -> Any:
        return self._single(lambda tx: tx.call_value(function, **params))

    def call_as(self, user_id: UUID | str, function: str, /, **params: Any) -> list[dict[str, Any]]:
        """Call `memory.<function>` as the signed-in Supabase Auth user `user_id`."""
        with self.transaction(as_user=user_id) as tx:
            return tx.call(function, **params)

    def ping(self) -> bool:
        """True when a round trip to the database succeeds."""
        try:
            self._single(lambda tx: tx.execute("select 1"))
            return True
        except SupamemError:
            return False


__all__ = ["DEFAULT_DATABASE_URL", "ROLE_SETTINGS_SQL", "SCHEMA", "Database", "Transaction", "database_url"]
