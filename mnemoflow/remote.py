"""The service over the wire: while `mnemoflow serve` owns a home's store, every other process (the
CLI, the Python `Memory` API, the Prefect flows) is its client and sends it the work.

`connect(settings)` returns a `RemoteService` when the home's server answers, else an in-process
`MemoryService`. `RemoteService` has the service's methods: each call is encoded from the method's
own type hints (pydantic `TypeAdapter`), sent to the server's operator endpoint
(`POST /v1/rpc/<method>`, authorised by the local client token in `<home>/server.json`), run there
by the same `MemoryService` method, and its result decoded into the same types, so a caller cannot
tell the two apart. Errors come back as the same `MnemoflowError` classes.
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast, get_type_hints

from mnemoflow import errors
from mnemoflow.config import Settings
from mnemoflow.service import MemoryService
from mnemoflow.unicode_text import refuse_lone_surrogates

SERVER_FILE = "server.json"
CLIENT_ONLY = frozenset({"progress", "step"})  # shown or run where the caller is, never sent
NOT_REMOTE = frozenset({"close", "store", "embedder", "engine", "settings"})
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
    signature: inspect.Signature
    params: dict[str, Any]  # name -> TypeAdapter, the client-only ones left out
    result: Any  # TypeAdapter of the return annotation

    def encode_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call as JSON; BadInputError, as the service itself says it, for text the wire cannot carry."""
        bound = self.signature.bind(None, *args, **kwargs)  # None stands for self
        sent = {name: value for name, value in list(bound.arguments.items())[1:] if name in self.params}
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
    from pydantic import TypeAdapter

    member = getattr(MemoryService, name, None)
    if name.startswith("_") or name in NOT_REMOTE or not inspect.isfunction(member):
        raise errors.BadInputError(f"no service method {name!r}")
    hints = get_type_hints(member)
    signature = inspect.signature(member)
    params = {p: TypeAdapter(hints[p]) for p in signature.parameters if p != "self" and p not in CLIENT_ONLY}
    return MethodSpec(name, signature, params, TypeAdapter(hints["return"]))


def remote_methods() -> list[str]:
    """Every service method a client may call remotely."""
    return sorted(name for name, member in vars(MemoryService).items()
                  if inspect.isfunction(member) and not name.startswith("_") and name not in NOT_REMOTE)


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
class RemoteService:
    """A `MemoryService` in another process: the same methods, sent to the home's server."""

    def __init__(self, settings: Settings, info: ServerInfo) -> None:
        import httpx

        self.settings = settings
        self.server = info
        self._http = httpx.Client(base_url=info.url, headers={"Authorization": f"Bearer {info.token}"},
                                  timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S))

    def __getattr__(self, name: str) -> Any:
        import httpx

        spec = method_spec(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                response = self._http.post(f"/v1/rpc/{name}", json=spec.encode_call(args, kwargs))
            except httpx.TransportError as exc:
                raise errors.ServerUnavailableError(
                    f"the server of {self.settings.home} at {self.server.url} did not answer: {exc}") from None
            try:
                payload = response.json()
            except ValueError:
                raise errors.MnemoflowError(
                    f"the server answered {name} with HTTP {response.status_code}: {response.text[:300]}") from None
            if response.status_code != 200:
                raise_remote(payload, response.status_code)
            return spec.result.validate_python(payload["result"])

        call.__name__ = name
        return call

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def running_server(settings: Settings) -> ServerInfo | None:
    """The home's server if it answers its health check with our token; None otherwise (no file, a
    stale file left by a crash, a server that is gone)."""
    import httpx

    info = read_server_info(settings.home)
    if info is None:
        return None
    try:
        answer = httpx.get(f"{info.url}/v1/local/health", headers={"Authorization": f"Bearer {info.token}"},
                           timeout=CONNECT_TIMEOUT_S)
    except httpx.HTTPError:
        return None
    return info if answer.status_code == 200 else None


def connect(settings: Settings) -> MemoryService:
    """The service for this home: its running server's, else one in this process (which opens the
    store itself, waiting for a busy file and then failing clearly)."""
    info = running_server(settings)
    if info is None:
        return MemoryService(settings)
    return cast(MemoryService, RemoteService(settings, info))
