"""The rest_api connector against a real HTTP server: paginated, bearer-protected, incremental on `updated_at`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from fastapi import FastAPI, Header, HTTPException

from mnemoflow.cli import main
from mnemoflow.config import Settings, load_settings
from mnemoflow.connectors.rest_api import RestApiError, RestApiUnavailableError
from mnemoflow.errors import ConfigError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.loopback import LoopbackServer, free_port

TOKEN = "s3cret-token"
SCOPE = Scope("acme", "alex")
PER_PAGE = 10
SUBJECTS = ["printer", "laptop", "badge", "vpn", "monitor"]
SPECIAL = {18: "The vpn concentrator in Lisbon drops every session after exactly one hour."}


def _ticket(n: int) -> dict[str, Any]:
    return {"id": n, "title": f"Ticket {n}: {SUBJECTS[n % 5]} issue",
            "body": SPECIAL.get(n, f"The {SUBJECTS[n % 5]} on floor {n} needs attention (case {n})."),
            "updated_at": f"2024-03-{n:02d}T09:00:00Z",
            "customer": {"name": f"Customer {n}", "tier": "gold" if n % 2 else "silver"}, "tags": ["it", "desk"]}


class HelpdeskApi:
    """A small helpdesk API: `GET /tickets?page=N&since=ISO` (records updated at or after `since`),
    `{"data": [...], "page": n, "total_pages": m}`, 401 without the bearer token; `GET /articles`
    returns one page holding two malformed records; `GET /outage` always answers 503."""

    def __init__(self) -> None:
        self.tickets: dict[int, dict[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        self.reset()
        self.app = FastAPI()

        def check(authorization: str | None) -> None:
            if authorization != f"Bearer {TOKEN}":
                raise HTTPException(status_code=401, detail="invalid token")

        @self.app.get("/tickets")
        def tickets(page: int = 1, since: str | None = None,
                    authorization: str | None = Header(None)) -> dict[str, Any]:
            check(authorization)
            self.requests.append({"page": page, "since": since})
            rows = sorted((t for t in self.tickets.values() if since is None or t["updated_at"] >= since),
                          key=lambda t: (t["updated_at"], t["id"]))
            total = max(1, -(-len(rows) // PER_PAGE))
            return {"data": rows[(page - 1) * PER_PAGE: page * PER_PAGE], "page": page, "total_pages": total}

        @self.app.get("/outage")
        def outage() -> dict[str, Any]:
            raise HTTPException(status_code=503, detail="down for maintenance")

        @self.app.get("/articles")
        def articles(authorization: str | None = Header(None)) -> dict[str, Any]:
            check(authorization)
            return {"data": [{"id": "kb-1", "title": "Resetting a badge", "body": "Hold the badge to reader 7."},
                             {"title": "no id here", "body": "cannot be cited"}, "not an object"]}

    def reset(self) -> None:
        self.tickets = {n: _ticket(n) for n in range(1, 26)}
        self.requests = []


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, HelpdeskApi]]:
    api = HelpdeskApi()
    served = LoopbackServer(free_port(), api.app)
    served.start()
    yield f"http://127.0.0.1:{served.port}/", api
    served.stop()


@pytest.fixture
def api(server: tuple[str, HelpdeskApi]) -> HelpdeskApi:
    server[1].reset()  # fresh records for each test, same server
    return server[1]


def _source(base_url: str, *, token: str = TOKEN, **resource: Any) -> dict[str, Any]:
    tickets = {"name": "tickets", "path": "tickets", "data_selector": "data", "primary_key": "id",
               "cursor_path": "updated_at", "cursor_param": "since", "initial_value": "2024-01-01T00:00:00Z",
               "title_field": "title", **resource}
    return {"kind": "rest_api", "tenant_id": SCOPE.tenant_id, "user_id": SCOPE.user_id, "base_url": base_url,
            "auth_token": token, "resources": [tickets],
            "paginator": {"type": "page_number", "base_page": 1, "page_param": "page", "total_path": "total_pages"}}


def _settings(tmp_path: Path, **sources: dict[str, Any]) -> Settings:
    return load_settings(tmp_path / "home", sources=sources)


def _documents(settings: Settings) -> dict[str, tuple[str, str, str, str]]:
    """uri -> (document_id, title, content_hash, commit_id) of live rest_api documents (store closed)."""
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        rows = con.execute("SELECT uri, document_id, title, content_hash, commit_id FROM source_documents "
                           "WHERE connector = 'rest_api' AND deleted_at IS NULL").fetchall()
    return {r[0]: r[1:] for r in rows}


def _commits(settings: Settings) -> int:
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        return con.execute("SELECT count(*) FROM commits").fetchone()[0]


def _top_chunk(service: MemoryService, query: str) -> Any:
    items = [i for i in service.recall(SCOPE, query, token_budget=4000).items if i.kind == "chunk"]
    assert items, f"nothing recalled for {query!r}"
    return items[0]


def test_sync_lands_every_record_then_only_what_changed(
    tmp_path: Path, server: tuple[str, HelpdeskApi], api: HelpdeskApi
) -> None:
    settings = _settings(tmp_path, helpdesk=_source(server[0]))
    with MemoryService(settings) as service:
        first = service.sync("helpdesk")
        assert (first.kind, first.records, first.ingested.documents_changed, first.errors) == ("rest_api", 25, 25, [])
        assert [r["page"] for r in api.requests] == [1, 2, 3]
        assert api.requests[0]["since"] == "2024-01-01T00:00:00Z"

        hit = _top_chunk(service, "why does the Lisbon vpn drop sessions?")
        assert "concentrator in Lisbon" in hit.text and "customer.tier: silver" in hit.text  # nested values flattened
        cite = hit.citations[0]
        assert (cite.uri, cite.title, cite.locator) == (
            "rest:helpdesk/tickets/18", "Ticket 18: vpn issue", {"resource": "tickets", "id": "18"})
    before = _documents(settings)
    assert set(before) == {f"rest:helpdesk/tickets/{n}" for n in range(1, 26)}
    assert before["rest:helpdesk/tickets/7"][1] == "Ticket 7: badge issue"
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:  # the raw landing table, for analysts
        landed = con.execute("SELECT tenant_id, user_id, count(*), json_extract_string(any_value(customer), "
                             "'$.name') IS NOT NULL FROM raw_rest_api.helpdesk_tickets GROUP BY ALL").fetchall()
    assert landed == [("acme", "alex", 25, True)]

    # two tickets edited, one new; the next sync asks from the last cursor and receives only those
    for n, body in ((4, "The badge reader at the north door rejects every card since Monday."),
                    (12, "The printer on floor 12 was replaced by a colour laser.")):
        api.tickets[n].update(body=body, updated_at=f"2024-04-0{n // 4}T10:00:00Z")
    api.tickets[26] = {**_ticket(26), "body": "The projector in room Atlas flickers during calls.",
                       "updated_at": "2024-04-05T08:00:00Z"}
    api.requests.clear()
    with MemoryService(settings) as service:
        second = service.sync("helpdesk")
        assert api.requests == [{"page": 1, "since": "2024-03-25T09:00:00Z"}]
        assert (second.records, second.ingested.documents_changed) == (3, 3)
        assert second.ingested.chunks_removed == 2  # the changed tickets' old chunks are retired

        hit = _top_chunk(service, "badge reader at the north door rejects cards")
        assert hit.citations[0].uri == "rest:helpdesk/tickets/4" and "north door" in hit.text
        texts = [i.text for i in service.recall(SCOPE, "badge on floor 4 needs attention case 4",
                                                token_budget=8000).items]
        assert not any("case 4)" in t for t in texts)  # the old body is gone from recall
        printer = [i.text for i in service.recall(SCOPE, "printer replaced colour laser", token_budget=8000).items
                   if "rest:helpdesk/tickets/12" in {c.uri for c in i.citations}]
        assert printer and all("colour laser" in t for t in printer)
        assert _top_chunk(service, "projector room Atlas flickers").citations[0].uri == "rest:helpdesk/tickets/26"
    after = _documents(settings)
    changed = {"rest:helpdesk/tickets/4", "rest:helpdesk/tickets/12", "rest:helpdesk/tickets/26"}
    assert set(after) == set(before) | changed
    assert {u: after[u] for u in before if u not in changed} == {u: before[u] for u in before if u not in changed}
    for uri in ("rest:helpdesk/tickets/4", "rest:helpdesk/tickets/12"):  # replaced in place: same id, new content
        assert after[uri][0] == before[uri][0] and after[uri][2] != before[uri][2] and after[uri][3] != before[uri][3]

    commits = _commits(settings)
    with MemoryService(settings) as service:
        third = service.sync("helpdesk")
    assert (third.records, third.ingested.documents_changed, third.errors) == (0, 0, [])
    assert _documents(settings) == after and _commits(settings) == commits


def test_a_record_that_cannot_be_a_document_is_an_ingest_error(tmp_path: Path, server: tuple[str, HelpdeskApi]) -> None:
    kb = _source(server[0])
    kb["paginator"] = {"type": "single_page"}
    kb["resources"] = [{"name": "articles", "path": "articles", "data_selector": "data", "title_field": "title"}]
    settings = _settings(tmp_path, kb=kb)
    with MemoryService(settings) as service:
        report = service.sync("kb")
        assert (report.records, report.ingested.documents_changed) == (3, 1)
        assert [(e.connector, e.kind) for e in report.errors] == [("rest_api", "record")] * 2
        assert "primary key 'id'" in report.errors[0].reason and "JSON object" in report.errors[1].reason
        assert len(service.store.ingest_errors(SCOPE)) == 2
        assert _top_chunk(service, "hold the badge to reader 7").citations[0].uri == "rest:kb/articles/kb-1"


def test_a_refused_token_names_the_http_status(tmp_path: Path, server: tuple[str, HelpdeskApi]) -> None:
    settings = _settings(tmp_path, helpdesk=_source(server[0], token="wrong"))
    with MemoryService(settings) as service, pytest.raises(RestApiError, match="HTTP 401") as refused:
        service.sync("helpdesk")
    assert refused.value.status == 401 and not refused.value.transient
    assert "auth_token" in str(refused.value) and "wrong" not in str(refused.value)


@pytest.mark.parametrize("case", ["connection refused", "HTTP 503"])
def test_an_unreachable_or_failing_server_is_a_transient_error(
    tmp_path: Path, server: tuple[str, HelpdeskApi], case: str
) -> None:
    if case == "connection refused":
        source = _source(f"http://127.0.0.1:{free_port()}/")
    else:
        source = _source(server[0], path="outage")
    settings = _settings(tmp_path, helpdesk=source)
    with MemoryService(settings) as service, pytest.raises(RestApiUnavailableError, match=case) as down:
        service.sync("helpdesk")
    assert down.value.transient
    assert down.value.status == (None if case == "connection refused" else 503)


def test_a_configuration_dlt_refuses_is_a_config_error(tmp_path: Path, server: tuple[str, HelpdeskApi]) -> None:
    source = _source(server[0])
    source["paginator"] = {"type": "page_numbers"}
    with MemoryService(_settings(tmp_path, helpdesk=source)) as service, \
            pytest.raises(ConfigError, match="source 'helpdesk': invalid REST API configuration.*paginator"):
        service.sync("helpdesk")


def test_cli_sync_prints_a_summary(
    tmp_path: Path, server: tuple[str, HelpdeskApi], api: HelpdeskApi, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    (home / "config.toml").write_text(
        "[sources.helpdesk]\n"
        f'kind = "rest_api"\ntenant_id = "acme"\nuser_id = "alex"\nbase_url = "{server[0]}"\nauth_token = "{TOKEN}"\n'
        'paginator = { type = "page_number", base_page = 1, total_path = "total_pages" }\n'
        "[[sources.helpdesk.resources]]\n"
        'name = "tickets"\npath = "tickets"\ndata_selector = "data"\ncursor_path = "updated_at"\n'
        'initial_value = "2024-01-01T00:00:00Z"\ntitle_field = "title"\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", "helpdesk", "--home", str(home)])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert "helpdesk (rest_api)" in out and "25 records" in out and "25 documents changed" in out


def test_with_redaction_no_record_lands_its_personal_data(tmp_path: Path, server: tuple[str, HelpdeskApi],
                                                           api: HelpdeskApi) -> None:
    api.tickets[5]["body"] = "Call me back on +1 206 555 0143 or write to sam.quist@corp.example, thanks."
    api.tickets[5]["customer"]["name"] = "sam.quist@corp.example"
    settings = load_settings(tmp_path / "home", sources={"helpdesk": _source(server[0])}, redact_pii=True)
    with MemoryService(settings) as service:
        assert service.sync("helpdesk").records == 25
        hit = _top_chunk(service, "who asked to be called back?")
        assert "[PHONE]" in hit.text and "[EMAIL]" in hit.text
    for needle in (b"sam.quist@corp.example", b"206 555 0143"):
        assert [f for f in settings.home.rglob("*") if f.is_file() and needle in f.read_bytes()] == []
    assert set(_documents(settings)) == {f"rest:helpdesk/tickets/{n}" for n in range(1, 26)}  # keys as they were
