"""The service over the wire: while `mnemoflow serve` owns a home's store, every other process (the
CLI, the Python `Memory` API, the Prefect flows) is its client and sends it the work.

`connect(settings)` returns a `RemoteService` when the home's server answers, else an in-process
`MemoryService`. `RemoteService` has the service's methods: each call is encoded from the method's
own type hints (pydantic `TypeAdapter`), sent to the server's operator endpoint
(`POST /v1/rpc/<method>`, authorised by the local client token in `<home>/server.json`), run there
by the same `MemoryService` method, and its result decoded into the same types, so a caller cannot
tell the two apart. Errors come back as the same `MnemoflowError` classes.

A command that only prints the answer needs none of those types: `open_calls(home)` gives it the
same calls on plain JSON (`ServerConnection.call`, or `LocalCalls` in-process when no server
answers), optionally as one of the result's documented views (`public`, `mem0`), computed where the
service runs. This module is light at import: the standard library only, so that such a command
starts in a fraction of a second (`http.client` rather than httpx: ~0.1 CPU s less per command);
pydantic and the service are imported by what needs them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, is_dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mnemoflow import errors

if TYPE_CHECKING:
    import http.client

    from mnemoflow.config import Settings
    from mnemoflow.service import MemoryService

SERVER_FILE = "server.json"
CLIENT_ONLY = frozenset({"progress", "step"})  # shown or run where the caller is, never sent
NOT_REMOTE = frozenset({"close", "store", "embedder", "engine", "settings"})
VIEWS = frozenset({"public", "mem0"})  # documented JSON views of a result a call may ask for
CONNECT_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class ServerInfo:
    """What a running server writes into its home (owner-only permissions) and removes on a clean stop."""

    url: str
    token: str
    pid: int
    quack_uri: str | None = None
    quack_token: str | None = None
    prefect_api_url: str | None = None  # where its schedules' deployments are served, once they are
    deployments: list[str] | None = None


def server_file(home: Path) -> Path:
    return home / SERVER_FILE


def read_server_info(home: Path) -> ServerInfo | None:
    """The home's server as its file describes it; None when there is none (or the file is unreadable)."""
    try:
        data = json.loads(server_file(home).read_text())
        return ServerInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def write_server_info(home: Path, info: ServerInfo) -> None:
    """Write atomically, readable by the owner only (the token reaches every tenant)."""
    home.mkdir(parents=True, exist_ok=True)
    temporary = home / f".{SERVER_FILE}.{os.getpid()}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(info.__dict__, handle)
    os.replace(temporary, server_file(home))


# ---------------------------------------------------------------------- the method surface
@dataclass(frozen=True)
class MethodSpec:
    """How one service method crosses the wire: its parameters' and result's adapters."""

    name: str
    signature: Any  # inspect.Signature
    params: dict[str, Any]  # name -> TypeAdapter, the client-only ones left out
    result: Any  # TypeAdapter of the return annotation

    def encode_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call as JSON; BadInputError, as the service itself says it, for text the wire cannot carry."""
        bound = self.signature.bind(None, *args, **kwargs)  # None stands for self
        sent = {name: value for name, value in list(bound.arguments.items())[1:] if name in self.params}
        from mnemoflow.unicode_text import refuse_lone_surrogates

        for name, value in sent.items():
            refuse_lone_surrogates(name, value)
        return {name: self.params[name].dump_python(value, mode="json") for name, value in sent.items()}

    def decode_call(self, payload: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(payload) - set(self.params))
        if unknown:
            raise errors.BadInputError(f"{self.name} takes no argument {', '.join(unknown)}")
        return {name: self.params[name].validate_python(value) for name, value in payload.items()}


@cache
def method_spec(name: str) -> MethodSpec:
    """The spec of a public `MemoryService` method; BadInputError for anything else."""
    import inspect
    from typing import get_type_hints

    from pydantic import TypeAdapter

    from mnemoflow.service import MemoryService

    member = getattr(MemoryService, name, None)
    if name.startswith("_") or name in NOT_REMOTE or not inspect.isfunction(member):
        raise errors.BadInputError(f"no service method {name!r}")
    hints = get_type_hints(member)
    signature = inspect.signature(member)
    params = {p: TypeAdapter(hints[p]) for p in signature.parameters if p != "self" and p not in CLIENT_ONLY}
    return MethodSpec(name, signature, params, TypeAdapter(hints["return"]))


def remote_methods() -> list[str]:
    """Every service method a client may call remotely."""
    import inspect

    from mnemoflow.service import MemoryService

    return sorted(name for name, member in inspect.getmembers(MemoryService, inspect.isfunction)
                  if not name.startswith("_") and name not in NOT_REMOTE)  # its own and its mixins' (rules)


def run_call(service: MemoryService, name: str, arguments: dict[str, Any], view: str | None = None) -> Any:
    """One call as JSON values in and out, the way the server runs it for a client: the arguments
    validated by the method's types, the result in JSON mode, or its documented `view`."""
    from pydantic import ValidationError

    spec = method_spec(name)
    if view is not None and view not in VIEWS:
        raise errors.BadInputError(f"no result view {view!r} (one of {', '.join(sorted(VIEWS))})")
    try:
        kwargs = spec.decode_call(arguments)
    except ValidationError as exc:  # arguments the method's types refuse
        raise errors.BadInputError(f"{name}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
    result = getattr(service, name)(**kwargs)
    if view is None:
        return spec.result.dump_python(result, mode="json")
    if not callable(getattr(result, view, None)):
        raise errors.BadInputError(f"{name} has no {view!r} view of its result")
    return getattr(result, view)()


def wire(value: Any) -> Any:
    """An argument as the wire carries it, for the plain values and dataclasses (a `Scope`) commands
    send without the method's types; the server validates it with them."""
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value


def error_payload(exc: errors.MnemoflowError) -> dict[str, Any]:
    """An error as the wire carries it: its class and bases (so a client that lacks the class raises
    the nearest one it has) and its message."""
    kinds = [c.__name__ for c in type(exc).__mro__ if issubclass(c, errors.MnemoflowError)]
    return {"error": {"types": kinds, "message": str(exc)}}


def raise_remote(payload: dict[str, Any], status: int) -> None:
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        raise errors.MnemoflowError(f"the server answered HTTP {status}: {str(payload)[:300]}")
    known = {c.__name__: c for c in _subclasses(errors.MnemoflowError)}
    kind = next((known[t] for t in error.get("types", []) if t in known), errors.MnemoflowError)
    raise kind(error.get("message", ""))


def _subclasses(cls: type) -> list[type]:
    found = [cls]
    for sub in cls.__subclasses__():
        found += _subclasses(sub)
    return found


# ---------------------------------------------------------------------- the client
class ServerConnection:
    """The home's server over HTTP/1.1 keep-alive connections (one per thread at a time, reused):
    `call` sends a service call as JSON and returns the answer as JSON."""

    def __init__(self, info: ServerInfo, home: Path) -> None:
        from urllib.parse import urlsplit

        self.server, self.home = info, home
        address = urlsplit(info.url)
        self._host, self._port = address.hostname or "127.0.0.1", address.port or 80
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _connection(self) -> http.client.HTTPConnection:
        import http.client
        import select

        with self._lock:
            while self._idle:
                connection = self._idle.pop()
                # readable while idle: the server closed it (its keep-alive ran out, or it stopped)
                if connection.sock is not None and not select.select([connection.sock], [], [], 0)[0]:
                    return connection
                connection.close()
        return http.client.HTTPConnection(self._host, self._port, timeout=CONNECT_TIMEOUT_S)

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> tuple[int, Any]:
        """(HTTP status, the decoded JSON answer) within `timeout` (None: however long the work takes,
        an ingest waits for its embeddings); ServerUnavailableError when the server does not answer."""
        import http.client

        connection = self._connection()
        headers = {"Authorization": f"Bearer {self.server.token}", "Content-Type": "application/json"}
        try:
            if connection.sock is None:
                connection.connect()  # within CONNECT_TIMEOUT_S
            connection.sock.settimeout(timeout)
            connection.request(method, path, None if body is None else json.dumps(body).encode(), headers)
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise errors.ServerUnavailableError(
                f"the server of {self.home} at {self.server.url} did not answer: {exc or type(exc).__name__}"
            ) from None
        if response.will_close:
            connection.close()
        else:
            with self._lock:
                self._idle.append(connection)
        try:
            return response.status, json.loads(raw)
        except ValueError:
            raise errors.MnemoflowError(
                f"the server answered {path} with HTTP {response.status}: {raw[:300].decode(errors='replace')}"
            ) from None

    def call(self, name: str, arguments: dict[str, Any], view: str | None = None) -> Any:
        """A service method run by the server on JSON arguments; its result as JSON (or its `view`)."""
        path = f"/v1/rpc/{name}" + (f"?view={view}" if view else "")
        status, payload = self.request("POST", path, {key: wire(value) for key, value in arguments.items()})
        if status != 200:
            raise_remote(payload, status)
        return payload["result"]

    def healthy(self) -> bool:
        try:
            return self.request("GET", "/v1/local/health", timeout=CONNECT_TIMEOUT_S)[0] == 200
        except errors.MnemoflowError:
            return False

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def __enter__(self) -> ServerConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalCalls:
    """`ServerConnection.call` with no server: the same JSON calls, run by a service in this process."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    def call(self, name: str, arguments: dict[str, Any], view: str | None = None) -> Any:
        return run_call(self.service, name, {key: wire(value) for key, value in arguments.items()}, view)

    def close(self) -> None:
        self.service.close()


def server_connection(home: Path) -> ServerConnection | None:
    """The home's server if it answers its health check with our token; None otherwise (no file, a
    stale file left by a crash, a server that is gone)."""
    info = read_server_info(home)
    if info is None:
        return None
    connection = ServerConnection(info, home)
    if connection.healthy():
        return connection
    connection.close()
    return None


def cluster_connection(servers: str, token: str | None, home: Path) -> ServerConnection:
    """The first of a cluster's servers (`settings.server`, comma-separated URLs, reached with the
    operator token `server_token`) that answers its health check."""
    if token is None:
        raise errors.ConfigError("server is set but server_token is not (MNEMOFLOW_SERVER_TOKEN: the operator "
                                 "token `mnemoflow cluster up` printed)")
    urls = [u.strip().rstrip("/") for u in servers.split(",") if u.strip()]
    for url in urls:
        connection = ServerConnection(ServerInfo(url=url, token=token, pid=0), home)
        if connection.healthy():
            return connection
        connection.close()
    raise errors.UnreachableError(f"no server answered at {', '.join(urls)} (settings.server)")


def target_connection(settings: Settings) -> ServerConnection | None:
    """Where a client sends its work: the first answering server of `settings.server` (a cluster's),
    else the home's own server when it runs, else None (the store is opened in this process)."""
    if settings.server:
        token = settings.server_token.get_secret_value() if settings.server_token else None
        return cluster_connection(settings.server, token, settings.home)
    return server_connection(settings.home)


def running_server(settings: Settings) -> ServerInfo | None:
    """The home's own server when it answers (never a cluster's: see `target_connection`)."""
    connection = server_connection(settings.home)
    if connection is None:
        return None
    connection.close()
    return connection.server


@contextmanager
def open_calls(home: Path | str | None) -> Iterator[tuple[ServerConnection | LocalCalls, str, str]]:
    """(the calls, the default tenant, the default user) for a command: its home's server when one
    answers, else a service in this process (which opens the store itself)."""
    from mnemoflow.client_settings import client_settings

    light = client_settings(home)
    connection = None
    if light is not None:
        connection = (cluster_connection(light.server, light.server_token, light.home) if light.server
                      else server_connection(light.home))
    calls: ServerConnection | LocalCalls
    if connection is not None and light is not None:
        calls, tenant, user = connection, light.tenant_id, light.user_id
    else:  # the full settings: for the store, or to say what is wrong with them
        from mnemoflow.config import load_settings
        from mnemoflow.service import MemoryService

        settings = load_settings(home)
        connection = target_connection(settings) if light is None else None
        calls, tenant, user = connection or LocalCalls(MemoryService(settings)), settings.tenant_id, settings.user_id
    try:
        yield calls, tenant, user
    finally:
        calls.close()


class RemoteService:
    """A `MemoryService` in another process: the same methods, sent to the home's server."""

    def __init__(self, settings: Settings, connection: ServerConnection) -> None:
        self.settings = settings
        self.server = connection.server
        self._connection = connection

    def __getattr__(self, name: str) -> Any:
        spec = method_spec(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return spec.result.validate_python(self._connection.call(name, spec.encode_call(args, kwargs)))

        call.__name__ = name
        return call

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> RemoteService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(settings: Settings) -> MemoryService:
    """The service for this home: its running server's, else one in this process (which opens the
    store itself, waiting for a busy file and then failing clearly)."""
    connection = target_connection(settings)
    if connection is None:
        from mnemoflow.service import MemoryService

        return MemoryService(settings)
    return cast("MemoryService", RemoteService(settings, connection))
