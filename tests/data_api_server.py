"""A loopback stand-in for the Supabase Data API's RPC route, for tests (stdlib, psycopg, and the
client's ROLE_SETTINGS_SQL).

It serves `POST /rest/v1/rpc/<function>` the way PostgREST (behind Supabase's gateway) does, so a
real supabase-py client can be pointed at it:

- the gateway's `apikey` header is required (401 without it) and must be a key signed with the
  project's JWT secret (401 "Invalid API key" otherwise, without a PostgREST code);
- `Authorization: Bearer <JWT>` is verified (HS256 with the test secret: stdlib hmac/hashlib),
  `exp` is checked, and the `role` claim picks the database role (no token: `anon`);
- `Content-Profile` (POST) / `Accept-Profile` picks the schema among the exposed ones (406
  PGRST106 otherwise; supabase-py's `.schema("memory")` sends both);
- the JSON body's keys are the function's argument names (PostgREST's convention), converted
  to the declared types with `json_to_record`; the function is found by name and argument names
  in the catalog (404 PGRST202 otherwise);
- the call runs in one transaction on a connection as the login role with `set local role
  <role>`, the role's own settings (anon's 3 s and authenticated's 8 s statement timeouts) and
  `set_config('request.jwt.claims', <payload>, true)`, exactly as PostgREST does;
- the answer is JSON: a set-returning function gives an array, a function returning one
  composite an object, a scalar function the scalar, a void function `null`;
- errors are PostgREST's error JSON `{"code", "message", "details", "hint"}` with PostgREST's
  SQLSTATE-to-HTTP-status mapping (PostgREST.Error.mapSQLtoHTTP), e.g. 22023 -> 400,
  42501 -> 401 for anon / 403 otherwise, 23505 -> 409, P0002 / 55000 -> 500.

    with DataAPIServer(database_url) as api:
        client = create_client(api.url, api.service_role_key)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from supamem.db import ROLE_SETTINGS_SQL

TEST_JWT_SECRET = "supamem-test-secret-with-at-least-32-characters"


# --- JWT (HS256) ------------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mint_jwt(claims: dict[str, Any], secret: str = TEST_JWT_SECRET, *, ttl: float | None = 3600) -> str:
    """An HS256 JWT with these claims (plus iat, and exp unless ttl is None)."""
    now = int(time.time())
    payload = {"iss": "supabase-test", "iat": now, **claims}
    if ttl is not None and "exp" not in payload:
        payload["exp"] = now + int(ttl)
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(payload, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64url(signature)}"


class _ApiError(Exception):
    def __init__(
        self, status: int, code: str | None, message: str, details: Any = None, hint: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        # The gateway's own answers carry no code: {"message", "hint"}.
        self.body = {"message": message, "hint": hint} if code is None else {
            "code": code, "details": details, "hint": hint, "message": message
        }
        self.headers = headers or {}


def verify_jwt(token: str, secret: str) -> dict[str, Any]:
    """The payload of a valid HS256 token; _ApiError (401, PostgREST's PGRST30x codes) otherwise."""
    parts = token.split(".")
    if len(parts) != 3:
        raise _ApiError(401, "PGRST301", f"Expected 3 parts in JWT; got {len(parts)}")
    try:
        header = json.loads(_b64url_decode(parts[0]))
        payload = json.loads(_b64url_decode(parts[1]))
        signature = _b64url_decode(parts[2])
    except (ValueError, UnicodeDecodeError):
        raise _ApiError(401, "PGRST301", "JWT couldn't be decoded") from None
    if not isinstance(header, dict) or header.get("alg") != "HS256":
        raise _ApiError(401, "PGRST301", "Wrong or unsupported encoding algorithm")
    expected = hmac.new(secret.encode(), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, signature):
        raise _ApiError(401, "PGRST301", "JWT cryptographic operation failed")
    if not isinstance(payload, dict):
        raise _ApiError(401, "PGRST303", "Parsing claims failed")
    exp = payload.get("exp")
    if exp is not None:
        if not isinstance(exp, (int, float)):
            raise _ApiError(401, "PGRST303", "The JWT 'exp' claim must be a number")
        if exp <= time.time():
            raise _ApiError(401, "PGRST303", "JWT expired")
    return payload


# --- SQLSTATE -> HTTP status (PostgREST.Error.mapSQLtoHTTP) ------------------------------------


def http_status(sqlstate: str, message: str, authenticated: bool) -> int:
    exact = {
        "23503": 409, "23505": 409, "25006": 405, "53400": 500, "57P01": 503, "P0001": 400,
        "42883": 404, "42P01": 404, "42P17": 500,
    }
    if sqlstate == "21000":
        return 400 if message.endswith("requires a WHERE clause") else 500
    if sqlstate == "22023":
        return 401 if message.startswith("role") and message.endswith("does not exist") else 400
    if sqlstate == "42501":
        return 403 if authenticated else 401
    if sqlstate in exact:
        return exact[sqlstate]
    prefixes = {
        "08": 503, "09": 500, "0L": 403, "0P": 403, "25": 500, "28": 403, "2D": 500, "38": 500,
        "39": 500, "3B": 500, "40": 500, "53": 503, "54": 500, "55": 500, "57": 500, "58": 500,
        "F0": 500, "HV": 500, "P0": 500, "XX": 500,
    }
    return prefixes.get(sqlstate[:2], 400)


# --- the function catalog (PostgREST's schema cache, per request: tests create functions) ------


@dataclass(frozen=True)
class _Routine:
    returns_set: bool
    returns_composite: bool
    returns_void: bool
    arguments: dict[str, str]
    required: frozenset[str]


_ROUTINES = """
select p.proretset, (t.typtype = 'c' or t.oid = 'record'::regtype), t.oid = 'void'::regtype,
    p.pronargs, p.pronargdefaults, coalesce(p.proargnames, '{}'), coalesce(p.proargmodes::text[], '{}'),
    array(select format_type(a.t, null)
          from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality as a(t, n) order by a.n)
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
join pg_catalog.pg_type as t on t.oid = p.prorettype
where n.nspname = %s and p.proname = %s and p.prokind = 'f'
"""


def _routines(conn: psycopg.Connection, schema: str, name: str) -> list[_Routine]:
    result = []
    for rset, composite, void, nargs, ndefaults, names, modes, types in conn.execute(_ROUTINES, [schema, name]):
        modes = list(modes) or ["i"] * len(types)
        inputs = [(n, t) for n, m, t in zip(names, modes, types, strict=False) if m in ("i", "b", "v") and n]
        arguments = dict(inputs)
        required = frozenset(n for n, _ in inputs[: max(0, nargs - ndefaults)])
        result.append(_Routine(rset, composite, void, arguments, required))
    return result


# --- the server -----------------------------------------------------------------------------------


class DataAPIServer:
    """`POST /rest/v1/rpc/<fn>` on 127.0.0.1:<ephemeral port>, backed by `database_url`.

    `url` is the project URL to give supabase-py; `service_role_key` / `anon_key` are JWTs signed
    with `jwt_secret`. `requests` records (function, role, status) of every call.
    """

    def __init__(
        self,
        database_url: str,
        *,
        jwt_secret: str = TEST_JWT_SECRET,
        schemas: tuple[str, ...] = ("public", "memory"),
        anon_role: str = "anon",
        pool_size: int = 8,
    ) -> None:
        self.jwt_secret = jwt_secret
        self.schemas = schemas
        self.anon_role = anon_role
        self.pool = ConnectionPool(database_url, min_size=1, max_size=pool_size, open=False, name="data-api")
        self.service_role_key = mint_jwt({"role": "service_role"}, jwt_secret, ttl=None)
        self.anon_key = mint_jwt({"role": "anon"}, jwt_secret, ttl=None)
        self.requests: list[tuple[str, str, int]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as httpx expects

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                server._handle(self)

            def do_GET(self) -> None:  # noqa: N802
                server._send(self, 405, {"code": "PGRST101", "details": None, "hint": None,
                                         "message": "Cannot use the GET method on RPC"})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="data-api", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> DataAPIServer:
        self.pool.open(wait=True, timeout=10)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self.pool.close()

    def __enter__(self) -> DataAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling --

    def _signed(self, key: str) -> bool:
        try:
            verify_jwt(key, self.jwt_secret)
        except _ApiError as exc:
            return exc.body.get("code") == "PGRST303"  # expired, but a key of this project
        return True

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        function, role = "?", "?"
        try:
            path = handler.path.split("?", 1)[0]
            prefix = "/rest/v1/rpc/"
            if not path.startswith(prefix) or "/" in path[len(prefix):] or len(path) == len(prefix):
                raise _ApiError(404, "PGRST125", "Invalid path specified in request URL")
            function = path[len(prefix):]
            apikey = handler.headers.get("apikey")
            if not apikey:
                # Supabase's gateway answers before PostgREST sees the request.
                raise _ApiError(401, None, "No API key found in request",
                                hint="No `apikey` request header or url param was found.")
            if not self._signed(apikey):  # the gateway knows the project's keys, not their expiry
                raise _ApiError(401, None, "Invalid API key",
                                hint="Double check your Supabase `anon` or `service_role` API key.")
            claims: dict[str, Any] = {}
            authorization = handler.headers.get("Authorization")
            if authorization:
                scheme, _, token = authorization.partition(" ")
                if scheme.lower() != "bearer" or not token.strip():
                    raise _ApiError(401, "PGRST301", "Empty JWT is sent in Authorization header",
                                    headers={"WWW-Authenticate": "Bearer"})
                claims = verify_jwt(token.strip(), self.jwt_secret)
            role = str(claims.get("role") or self.anon_role)
            schema = handler.headers.get("Content-Profile") or self.schemas[0]
            if schema not in self.schemas:
                raise _ApiError(406, "PGRST106", f"Invalid schema: {schema}",
                                hint=f"Only the following schemas are exposed: {', '.join(self.schemas)}")
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError as exc:
                raise _ApiError(400, "PGRST102", f"Empty or invalid json: {exc}") from None
            if not isinstance(body, dict):
                raise _ApiError(400, "PGRST102", "the RPC body must be a JSON object")
            status, result = self._call(schema, function, body, role, claims, handler)
            headers: dict[str, str] = {}
        except _ApiError as exc:
            status, result, headers = exc.status, exc.body, exc.headers
        except Exception as exc:  # noqa: BLE001 - answer 500 like a crashed server, never hang
            status, headers = 500, {}
            result = {"code": "PGRSTX00", "details": None, "hint": None, "message": repr(exc)}
        with self._lock:  # recorded before answering, so a client that got the answer sees it
            self.requests.append((function, role, status))
        self._send(handler, status, result, headers)

    def _call(
        self, schema: str, function: str, body: dict[str, Any], role: str, claims: dict[str, Any],
        handler: BaseHTTPRequestHandler,
    ) -> tuple[int, Any]:
        with self.pool.connection() as conn:
            keys = sorted(body)
            routine = next(
                (r for r in _routines(conn, schema, function)
                 if set(keys) <= set(r.arguments) and r.required <= set(keys)),
                None,
            )
            conn.rollback()
            if routine is None:
                params = ", ".join(keys)
                raise _ApiError(
                    404, "PGRST202",
                    f"Could not find the function {schema}.{function}({params}) in the schema cache",
                    details=f"Searched for the function {schema}.{function} with parameters {params} or with "
                    "a single unnamed json/jsonb parameter, but no matches were found in the schema cache.",
                )
            call = sql.SQL("{}.{}({})").format(
                sql.Identifier(schema), sql.Identifier(function),
                sql.SQL(", ").join(sql.SQL("{0} := pgrst_args.{0}").format(sql.Identifier(k)) for k in keys),
            )
            args = sql.SQL("json_to_record(%(body)s::json) as pgrst_args({})").format(
                sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(k), sql.SQL(routine.arguments[k])) for k in keys)
            )
            if routine.returns_set or routine.returns_composite:
                source = (sql.SQL("{} cross join lateral {} as pgrst_call").format(args, call) if keys
                          else sql.SQL("{} as pgrst_call").format(call))
                if routine.returns_set:
                    query = sql.SQL("select coalesce(json_agg(pgrst_call), '[]') from {}").format(source)
                else:
                    query = sql.SQL(
                        "select case when pgrst_call is null then null else to_json(pgrst_call) end from {}"
                    ).format(source)
            else:
                value = sql.SQL("{}::text").format(call) if routine.returns_void else sql.SQL("to_json({})").format(call)
                query = (sql.SQL("select {} from {}").format(value, args) if keys
                         else sql.SQL("select {}").format(value))
            request_headers = {k.lower(): v for k, v in handler.headers.items()}
            try:
                with conn.transaction():
                    conn.execute(sql.SQL("set local role {}").format(sql.Identifier(role)))
                    conn.execute(f"select {ROLE_SETTINGS_SQL}", {"role": role})
                    conn.execute("select set_config('request.jwt.claims', %s, true)", [json.dumps(claims)])
                    conn.execute("select set_config('request.method', 'POST', true)")
                    conn.execute("select set_config('request.path', %s, true)", [handler.path])
                    conn.execute("select set_config('request.headers', %s, true)", [json.dumps(request_headers)])
                    row = conn.execute(query, {"body": json.dumps(body)}).fetchone()
            except psycopg.Error as exc:
                diag = exc.diag
                code = exc.sqlstate or "PGRST000"
                message = diag.message_primary or str(exc)
                status = 503 if exc.sqlstate is None else http_status(code, message, role != self.anon_role)
                raise _ApiError(status, code, message, diag.message_detail, diag.message_hint) from None
            if routine.returns_void:
                return 200, None
            return 200, None if row is None else row[0]


__all__ = ["TEST_JWT_SECRET", "DataAPIServer", "http_status", "mint_jwt", "verify_jwt"]
