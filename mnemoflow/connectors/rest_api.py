"""The `rest_api` connector: records of a REST API, landed by dlt's `rest_api` source, one document each.

Every configured resource is an endpoint dlt pages through (bearer auth, the configured or a
detected paginator). With a `cursor_path` the endpoint is incremental: dlt sends the cursor's
last value as `cursor_param` and keeps it in its state under the home's dlt directory, so a
re-sync asks only for what changed since, and drops records at the boundary it has already seen.
What passes lands in `raw_rest_api.<source>_<resource>` (merged on tenant, user and primary key;
nested values kept as JSON); the sync (`ingest.sync`) makes each record the document
`rest:<source>/<resource>/<primary key>`.

A record without a usable key is an ingest error; a failing request ends the landing
with `RestApiUnavailableError` (worth retrying: unreachable, timed out, 429, 5xx) or
`RestApiError` (4xx, an answer dlt cannot read).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemoflow.config import RestApiSource, RestResource
from mnemoflow.errors import BadInputError, ConfigError, MnemoflowError, TerminalError, TransientError
from mnemoflow.models import IngestErrorRecord
from mnemoflow.storage import Scope, Store

CONNECTOR = "rest_api"
DATASET = "raw_rest_api"
SCOPE_COLUMNS = ("tenant_id", "user_id")
# A record's own field named like a scope column lands under this prefix (the document keeps the record as is).
RECORD_PREFIX = "record_"
# dlt retries 429, 5xx, timeouts and refused connections itself; the Prefect flow retries the whole
# sync on top, so a few quick attempts are enough here (dlt's default waits about 15 s on a dead host).
REQUEST_ATTEMPTS = 3
REQUEST_BACKOFF_S = 0.5
REQUEST_TIMEOUT_S = 60.0


class RestApiError(TerminalError):
    """The API refused a request (a 4xx: bad token, wrong path) or answered with something unreadable."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RestApiUnavailableError(TransientError):
    """The API could not be reached, timed out, or answered 429 or 5xx: worth retrying later."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def record_uri(source: str, resource: str, key: str) -> str:
    return f"rest:{source}/{resource}/{key}"


def landing_table(source: str, resource: str) -> str:
    return f"{source}_{resource}"


@dataclass
class RecordLanding:
    """Records new or changed since the last sync, (resource name, record) in arrival order, and
    records that could not be landed."""

    records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    errors: list[IngestErrorRecord] = field(default_factory=list)


def _pipeline_name(scope: Scope, source: str) -> str:
    key = hashlib.sha256(f"{scope.tenant_id}\x1f{scope.user_id}\x1f{source}".encode()).hexdigest()[:16]
    return f"rest_api_{key}"


def record_key(record: Any, resource: RestResource) -> str:
    """The record's primary key as the text its URI carries; `BadInputError` when there is none."""
    if not isinstance(record, dict):
        raise BadInputError(f"a record must be a JSON object, got {type(record).__name__}")
    value = record.get(resource.primary_key)
    if value is None or isinstance(value, dict | list) or str(value).strip() == "":
        raise BadInputError(f"the record has no usable primary key {resource.primary_key!r}")
    return str(value)


def rest_api_config(source: RestApiSource, *, session: Any = None) -> dict[str, Any]:
    """The dlt `RESTAPIConfig` of a configured source."""
    client: dict[str, Any] = {"base_url": source.base_url}
    if source.auth_token is not None:
        client["auth"] = {"type": "bearer", "token": source.auth_token.get_secret_value()}
    if source.paginator is not None:
        client["paginator"] = dict(source.paginator)
    if session is not None:
        client["session"] = session
    resources = []
    for r in source.resources:
        params: dict[str, Any] = dict(r.params)
        if r.cursor_path:
            # the record's own key deduplicates records at the cursor boundary (the landing key adds the scope);
            # a record without the cursor is kept rather than ending the sync
            params[r.cursor_param] = {"type": "incremental", "cursor_path": r.cursor_path,
                                      "initial_value": r.initial_value, "primary_key": r.primary_key,
                                      "on_cursor_value_missing": "include"}
        endpoint: dict[str, Any] = {"path": r.path, "params": params}
        if r.data_selector:
            endpoint["data_selector"] = r.data_selector
        resources.append({"name": r.name, "primary_key": r.primary_key, "write_disposition": "merge",
                          "endpoint": endpoint})
    return {"client": client, "resources": resources}


def _session() -> Any:
    from dlt.sources.helpers.requests import Client

    return Client(raise_for_status=False, request_timeout=REQUEST_TIMEOUT_S, request_max_attempts=REQUEST_ATTEMPTS,
                  request_backoff_factor=REQUEST_BACKOFF_S).session


def land_records(
    store: Store, scope: Scope, name: str, source: RestApiSource, *, pipelines_dir: Path,
    redact: Callable[[Any], Any] | None = None,
) -> RecordLanding:
    """Run the dlt pipeline: page through every resource, keep what is new since the cursor, land it;
    `redact` (PII redaction) rewrites every field but the record's key and cursor before dlt lands it.

    Raises `ConfigError` for a configuration dlt refuses, `RestApiUnavailableError` or `RestApiError`
    when a request fails (nothing is landed then, and the cursor stays where it was)."""
    import dlt
    from dlt.common.exceptions import DltException
    from dlt.sources.rest_api import rest_api_source

    landing = RecordLanding()

    def keep(resource: RestResource) -> Any:
        """Runs before dlt's incremental step, which cannot place a record without its key."""
        def usable(record: Any) -> bool:
            try:
                record_key(record, resource)
            except BadInputError as exc:
                shown = redact(record) if redact is not None else record
                landing.errors.append(IngestErrorRecord(CONNECTOR, record_uri(name, resource.name, "?"), "record",
                                                        str(exc), detail=_preview(shown)))
                return False
            return True

        return usable

    def lander(resource: RestResource) -> Any:
        def land(items: Any) -> Iterator[dict[str, Any]]:
            kept = {resource.primary_key, resource.cursor_path}  # what finds the record again, as it is
            for record in items if isinstance(items, list) else [items]:
                if redact is not None and isinstance(record, dict):
                    record = {k: v if k in kept else redact(v) for k, v in record.items()}
                landing.records.append((resource.name, record))
                yield {**{_landing_column(k): v for k, v in record.items()},
                       "tenant_id": scope.tenant_id, "user_id": scope.user_id}

        return dlt.transformer(
            land, name=f"{resource.name}_records", table_name=landing_table(name, resource.name),
            primary_key=(*SCOPE_COLUMNS, _landing_column(resource.primary_key)), write_disposition="merge",
            max_table_nesting=0)

    config = rest_api_config(source, session=_session())
    for endpoint, resource in zip(config["resources"], source.resources, strict=True):
        endpoint["processing_steps"] = [{"filter": keep(resource)}]
    try:
        api = rest_api_source(config, name=CONNECTOR)
    except (DltException, ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"source {name!r}: invalid REST API configuration: {_first_line(exc)}") from exc

    with store.landing() as destination:
        pipeline = dlt.pipeline(pipeline_name=_pipeline_name(scope, name), pipelines_dir=str(pipelines_dir),
                                destination=destination, dataset_name=DATASET)
        try:
            pipeline.run([api.resources[r.name] | lander(r) for r in source.resources])
        except Exception as exc:  # dlt wraps whatever failed in PipelineStepFailed: translated at the boundary
            raise _translate(name, source, exc) from exc
    return landing


def _landing_column(field_name: str) -> str:
    """The record's field name, unless dlt would name its column like a scope column (`userId` too)."""
    from dlt.common.normalizers.naming.snake_case import NamingConvention

    if NamingConvention().normalize_identifier(field_name) in SCOPE_COLUMNS:
        return f"{RECORD_PREFIX}{field_name}"
    return field_name


def _preview(record: Any, limit: int = 300) -> str:
    text = json.dumps(record, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = getattr(current, "exception", None) or current.__cause__ or current.__context__
    return chain


def _translate(name: str, source: RestApiSource, exc: BaseException) -> MnemoflowError:
    """A dlt/requests failure as the mnemoflow error a user and the retry machinery understand."""
    import requests
    from dlt.sources.helpers.rest_client.redaction import sanitize_url
    from urllib3.exceptions import LocationValueError

    where = f"source {name!r} ({source.base_url})"
    chain = _causes(exc)
    for error in chain:
        if isinstance(error, MnemoflowError):
            return error
        if isinstance(error, requests.exceptions.InvalidURL | requests.exceptions.MissingSchema
                      | requests.exceptions.InvalidSchema | LocationValueError):
            return ConfigError(f"{where}: not a usable URL ({_first_line(error)}); check base_url and the paths")
        if isinstance(error, requests.HTTPError) and error.response is not None:
            response = error.response
            status = response.status_code
            reason = response.reason if isinstance(response.reason, str) else ""
            message = f"{where}: HTTP {status} {reason} from {sanitize_url(response.url)}".replace("  ", " ")
            if status == 429 or status >= 500:
                return RestApiUnavailableError(f"{message} (retrying later may help)", status)
            if status in (401, 403):
                message += " (check the source's auth_token)"
            return RestApiError(message, status)
        if isinstance(error, requests.Timeout):
            return RestApiUnavailableError(f"{where}: the request timed out after {REQUEST_ATTEMPTS} attempts")
        if isinstance(error, requests.ConnectionError):
            return RestApiUnavailableError(
                f"{where}: could not connect after {REQUEST_ATTEMPTS} attempts ({_connection_reason(error)})")
    step = getattr(exc, "step", None)
    root = chain[-1]
    stage = f" in dlt's {step} step" if step else ""
    return RestApiError(f"{where}: sync failed{stage}: {type(root).__name__}: {_first_line(root)}")


def _connection_reason(error: BaseException) -> str:
    text = str(error)
    for known in ("Connection refused", "Name or service not known", "No route to host", "Connection reset"):
        if known in text:
            return known.lower()
    return _first_line(error)
