"""How the jobs reach the database: one `rpc(function, params)` call, over two transports.

- `PsycopgTransport` talks to Postgres directly (DATABASE_URL: a direct connection or Supavisor)
  through `supamem.db.Database`, the one module that owns connections.
- `SupabaseTransport` goes through the Supabase Data API (PostgREST) with supabase-py, for hosts
  where the database port is blocked (SUPABASE_URL + SUPABASE_SERVICE_ROLE_KEY).

Both follow PostgREST's RPC convention, so a caller cannot tell them apart:

- `params` keys are the functions' exact argument names (`{"p_kinds": [...], "p_worker": ...}`)
  with JSON values; Postgres converts them to the argument types with `json_to_record`, as
  PostgREST does, so `"300 seconds"` becomes an interval and a JSON array a `text[]` or `jsonb`
  by the function's declaration, not by a guess on the Python side.
- The result is JSON-shaped and built by Postgres: a set-returning function gives a list (of
  objects, or of scalars), a function returning one composite an object, a scalar function the
  scalar, a void function None.
- Errors come back as `supamem.errors` types with the SQLSTATE in `.sqlstate`; a job whose lease
  is gone (SQLSTATE 55000 from the lease check) is `StateError`.

`transport_from_env()` picks the Data API when SUPABASE_URL is set, else DATABASE_URL.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from psycopg import sql

from supamem.db import SCHEMA, Database, database_url
from supamem.errors import (
    DatabaseUnavailableError,
    NotFoundError,
    PermissionDeniedError,
    SupamemError,
    error_for,
)


@runtime_checkable
class Transport(Protocol):
    """One RPC call into schema `memory`: PostgREST's convention (see the module docstring)."""

    name: str

    def rpc(self, function: str, params: Mapping[str, Any] | None = None) -> Any: ...

    def close(self) -> None: ...


def _check_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    params = dict(params or {})
    for key in params:
        if not isinstance(key, str) or not key.startswith("p_"):
            raise ValueError(f"RPC argument names are the functions' own (p_...), got {key!r}")
    return params


# --- psycopg ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Signature:
    """What PostgREST's schema cache knows about a function, for building its call."""

    returns_set: bool
    returns_composite: bool
    returns_void: bool
    arguments: dict[str, str]  # name -> type as format_type() spells it
    required: frozenset[str]  # arguments without a default


_SIGNATURE_QUERY = """
select p.proretset as returns_set,
    t.typtype = 'c' or (t.oid = 'record'::regtype) as returns_composite,
    t.oid = 'void'::regtype as returns_void,
    p.pronargs as nargs,
    p.pronargdefaults as ndefaults,
    coalesce(p.proargnames, '{}') as names,
    coalesce(p.proargmodes::text[], '{}') as modes,
    array(
        select format_type(a.type, null)
        from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality as a(type, n)
        order by a.n
    ) as types
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
join pg_catalog.pg_type as t on t.oid = p.prorettype
where n.nspname = %(schema)s and p.proname = %(function)s and p.prokind = 'f'
"""


class PsycopgTransport:
    """RPCs over a direct (or Supavisor) Postgres connection, acting as service_role.

    The call is built the way PostgREST builds it: the arguments travel as one JSON object that
    `json_to_record` turns into the declared argument types, and the result is made JSON by
    Postgres (`json_agg` / `to_json`), so results are identical to the Data API's.
    """

    name = "psycopg"

    def __init__(self, db: Database, *, owns_db: bool = False) -> None:
        self.db = db
        self._owns_db = owns_db
        self._signatures: dict[str, list[_Signature]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str | None = None, *, max_size: int = 10, **kwargs: Any) -> PsycopgTransport:
        """A transport with its own pool (`Database`), allowed to call the job RPCs."""
        db = Database(url or database_url(), max_size=max_size, **kwargs)
        return cls(db, owns_db=True)

    def _lookup(self, function: str) -> list[_Signature]:
        with self._lock:
            cached = self._signatures.get(function)
        if cached is not None:
            return cached
        with self.db.transaction() as tx:
            rows = tx.execute(_SIGNATURE_QUERY, {"schema": SCHEMA, "function": function})
        signatures = []
        for row in rows:
            names, modes, types = list(row["names"]), list(row["modes"]), list(row["types"])
            modes = modes or ["i"] * len(types)
            arguments: dict[str, str] = {}
            ordered: list[str] = []
            for name, mode, type_ in zip(names, modes, types, strict=False):
                if mode in ("i", "b", "v") and name:
                    arguments[name] = type_
                    ordered.append(name)
            required = frozenset(ordered[: max(0, row["nargs"] - row["ndefaults"])])
            signatures.append(
                _Signature(row["returns_set"], row["returns_composite"], row["returns_void"], arguments, required)
            )
        with self._lock:
            self._signatures[function] = signatures
        return signatures

    def _signature(self, function: str, params: Mapping[str, Any]) -> _Signature:
        keys = set(params)
        for signature in self._lookup(function):
            if keys <= set(signature.arguments) and signature.required <= keys:
                return signature
        raise NotFoundError(
            f"Could not find the function {SCHEMA}.{function}({', '.join(sorted(keys))})",
            sqlstate="PGRST202",
            hint="Check the function name and its argument names (they start with p_).",
        )

    @staticmethod
    def _query(function: str, signature: _Signature, names: list[str]) -> sql.Composed:
        call = sql.SQL("{}.{}({})").format(
            sql.Identifier(SCHEMA),
            sql.Identifier(function),
            sql.SQL(", ").join(
                sql.SQL("{name} => _args.{name}").format(name=sql.Identifier(name)) for name in names
            ),
        )
        # The arguments as one JSON object, typed by the catalog's declaration (never the caller).
        args = sql.SQL("json_to_record(%(args)s::json) as _args({})").format(
            sql.SQL(", ").join(
                sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(signature.arguments[name])) for name in names
            )
        )
        if signature.returns_set or signature.returns_composite:
            source = sql.SQL("{args} cross join lateral {call} as _result" if names else "{call} as _result")
            source = source.format(args=args, call=call)
            if signature.returns_set:
                return sql.SQL("select coalesce(json_agg(_result), '[]'::json) from {}").format(source)
            # A composite that is entirely null (a function that found nothing) is JSON null.
            return sql.SQL("select case when _result is null then null else to_json(_result) end from {}").format(
                source
            )
        value = call if signature.returns_void else sql.SQL("to_json({})").format(call)
        if names:
            return sql.SQL("select {} from {}").format(value, args)
        return sql.SQL("select {}").format(value)

    def rpc(self, function: str, params: Mapping[str, Any] | None = None) -> Any:
        params = _check_params(params)
        signature = self._signature(function, params)
        names = sorted(params)
        query = self._query(function, signature, names)
        with self.db.transaction() as tx:
            rows = tx.execute(query, {"args": json.dumps(params, default=str)} if names else None)
        if not rows or signature.returns_void:
            return None
        return next(iter(rows[0].values()))

    def close(self) -> None:
        if self._owns_db:
            self.db.close()


# --- Supabase Data API -------------------------------------------------------------------------

# PostgREST's own error codes (PGRSTnnn) that mean something specific here.
_UNAVAILABLE_PGRST = {"PGRST000", "PGRST001", "PGRST002", "PGRST003"}
_AUTH_PGRST = {"PGRST300", "PGRST301", "PGRST302", "PGRST303"}


def error_from_postgrest(
    code: str | None, message: str | None, details: Any = None, hint: Any = None
) -> SupamemError:
    """A typed error from PostgREST's error JSON ({"code", "message", "details", "hint"})."""
    message = message or "Data API error"
    detail = None if details is None else (details if isinstance(details, str) else json.dumps(details))
    hint_text = None if hint is None else (hint if isinstance(hint, str) else json.dumps(hint))
    kwargs: dict[str, Any] = {"sqlstate": code, "detail": detail, "hint": hint_text}
    if code is None and "API key" in message:
        # Supabase's API gateway (before PostgREST): "No API key found", "Invalid API key".
        return PermissionDeniedError(message, **kwargs)
    if code in _UNAVAILABLE_PGRST:
        return DatabaseUnavailableError(f"database unavailable: {message}", **kwargs)
    if code in _AUTH_PGRST:
        return PermissionDeniedError(message, **kwargs)
    if code == "PGRST202":
        return NotFoundError(message, **kwargs)
    if code and code.isdigit() and len(code) == 3:
        # No PostgREST JSON (a proxy's error page): supabase-py puts the HTTP status in `code`.
        status = int(code)
        if status in (401, 403):
            return PermissionDeniedError(message, **kwargs)
        if status in (404,):
            return NotFoundError(message, **kwargs)
        if status in (502, 503, 504, 520, 521, 522, 523, 524):
            return DatabaseUnavailableError(f"Data API unavailable ({status}): {message}", **kwargs)
        return SupamemError(message, **kwargs)
    if code and code.startswith("PGRST"):
        return SupamemError(message, **kwargs)
    return error_for(code, message, detail=detail, hint=hint_text)


class SupabaseTransport:
    """RPCs through the Supabase Data API with supabase-py and the service role key.

    `create_client(url, key).schema("memory").rpc(fn, params).execute().data`: supabase-py sends
    `Content-Profile: memory`, the key as `apikey` and as the bearer token, so the request runs as
    service_role. supabase-py only retries GET/HEAD requests, so a POSTed claim is never sent
    twice by the client library.
    """

    name = "supabase"

    def __init__(self, url: str, service_role_key: str, *, timeout: float = 60.0) -> None:
        import httpx

        from supabase import ClientOptions, create_client  # optional dependency (extra "supabase")

        if not url or not service_role_key:
            raise ValueError("SupabaseTransport needs the project URL and the service role key")
        self.url = url
        # Our own httpx client: its timeout applies, and supabase-py skips its deprecated
        # timeout/verify arguments. httpx clients are thread-safe; the worker's threads share it.
        self._http = httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=True)
        self._client = create_client(
            url,
            service_role_key,
            options=ClientOptions(
                schema=SCHEMA,
                httpx_client=self._http,
                auto_refresh_token=False,
                persist_session=False,
            ),
        )
        self._rest = self._client.schema(SCHEMA)

    def rpc(self, function: str, params: Mapping[str, Any] | None = None) -> Any:
        import httpx
        from postgrest.exceptions import APIError

        params = _check_params(params)
        try:
            return self._rest.rpc(function, params).execute().data
        except APIError as exc:
            raise error_from_postgrest(exc.code, exc.message, exc.details, exc.hint) from exc
        except httpx.TransportError as exc:  # refused, reset, timed out: the API is not there
            raise DatabaseUnavailableError(f"Data API unreachable at {self.url}: {exc}") from exc

    def close(self) -> None:
        self._http.close()


# --- choice ------------------------------------------------------------------------------------


def transport_from_env(
    env: Mapping[str, str] | None = None,
    *,
    pool_size: int = 10,
    application_name: str = "supamem-jobs",
) -> Transport:
    """The Data API when SUPABASE_URL is set (with SUPABASE_SERVICE_ROLE_KEY, or seed 001's name for
    it, SUPABASE_KEY), else Postgres at DATABASE_URL (default: the local stack). `application_name`
    shows in pg_stat_activity."""
    env = os.environ if env is None else env
    url = env.get("SUPABASE_URL")
    if url:
        key = env.get("SUPABASE_SERVICE_ROLE_KEY") or env.get("SUPABASE_KEY")
        if not key:
            raise ValueError("SUPABASE_URL is set but SUPABASE_SERVICE_ROLE_KEY (or SUPABASE_KEY) is not")
        return SupabaseTransport(url, key)
    db = Database(
        env.get("DATABASE_URL") or database_url(),
        max_size=pool_size,
        application_name=application_name[:63],
    )
    return PsycopgTransport(db, owns_db=True)


__all__ = [
    "PsycopgTransport",
    "SupabaseTransport",
    "Transport",
    "error_from_postgrest",
    "transport_from_env",
]
