"""The tenant routes the dashboard reads and decides through, over the real service: the entity graph,
reviews, conflicts, citations, owners, runs and the static dashboard itself. A key reaches its own
tenant only: another tenant's entity, review or conflict is not found."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mnemoflow.api.http import create_app
from mnemoflow.config import load_settings
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.models import LinkDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.storage.quality import QualityResult
from mnemoflow.timeutil import utcnow

NADIA = {"user_id": "nadia"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, dict, dict, MemoryService]]:
    with MemoryService(load_settings(tmp_path / "home")) as service:
        acme = {"Authorization": f"Bearer {service.create_api_key('acme')[1]}"}
        globex = {"Authorization": f"Bearer {service.create_api_key('globex')[1]}"}
        client = TestClient(create_app(service))
        for text in ("Nadia lives in Bremen.", "Nadia works at Osterholz Bakery.", "Nadia moved to Kiel in March."):
            assert client.post("/v1/memories", json={**NADIA, "text": text}, headers=acme).status_code == 200
        yield client, acme, globex, service


def ids_by_name(client: TestClient, key: dict, **params: str) -> dict[str, str]:
    answer = client.get("/v1/entities", params={**NADIA, **params}, headers=key)
    assert answer.status_code == 200, answer.text
    return {e["name"]: e["entity_id"] for e in answer.json()["entities"]}


def test_entities_card_graph_and_evolution_over_http(api) -> None:
    client, acme, globex, _ = api
    named = ids_by_name(client, acme)
    assert {"Nadia", "Bremen", "Kiel", "Osterholz Bakery"} <= set(named)
    assert ids_by_name(client, acme, type="place").keys() == {"Bremen", "Kiel"}
    nadia = named["Nadia"]
    card = client.get(f"/v1/entities/{nadia}", params=NADIA, headers=acme).json()
    assert {n["entity"]["name"] for n in card["neighbours_by_memory"]} >= {"Kiel", "Osterholz Bakery"}
    assert card["neighbours_by_relation"] and card["recent_mentions"][0]["citations"]

    graph = client.get(f"/v1/entities/{nadia}/graph", params={**NADIA, "depth": 2}, headers=acme).json()
    labels = {n["data"]["label"] for n in graph["elements"]["nodes"]}
    assert {"Nadia", "Kiel", "Bremen"} <= labels and graph["elements"]["edges"]
    assert all({"source", "target", "label"} <= set(e["data"]) for e in graph["elements"]["edges"])
    too_deep = client.get(f"/v1/entities/{nadia}/graph", params={**NADIA, "depth": 4}, headers=acme)
    assert too_deep.status_code == 422 and "3 (the cap, graph_max_depth)" in too_deep.json()["detail"]
    overview = client.get("/v1/graph", params=NADIA, headers=acme).json()
    assert {n["data"]["label"] for n in overview["elements"]["nodes"]} >= {"Nadia", "Kiel"}

    chain = next(c for c in client.get(f"/v1/entities/{nadia}/evolution", params=NADIA, headers=acme).json()["chains"]
                 if len(c["steps"]) > 1)
    assert ["Bremen" in chain["steps"][0]["content"], "Kiel" in chain["steps"][1]["content"]] == [True, True]
    history = client.get(f"/v1/entities/{named['Bremen']}/memories", params={**NADIA, "include_history": "true"},
                         headers=acme).json()
    assert [m["memory"]["is_latest"] for m in history["memories"]] == [False]
    assert client.get(f"/v1/entities/{named['Bremen']}/memories", params=NADIA, headers=acme).json()["memories"] == []

    # another tenant's key, another user of the tenant, an id no one holds: not found, like a memory
    for path in ("", "/memories", "/graph", "/evolution"):
        assert client.get(f"/v1/entities/{nadia}{path}", params=NADIA, headers=globex).status_code == 404
        assert client.get(f"/v1/entities/{nadia}{path}", params={"user_id": "ola"}, headers=acme).status_code == 404
        assert client.get(f"/v1/entities/nothing-here{path}", params=NADIA, headers=acme).status_code == 404
    assert client.get("/v1/entities", params=NADIA, headers=globex).json() == {"entities": []}
    assert client.get("/v1/graph", params=NADIA, headers=globex).json()["elements"]["nodes"] == []
    assert client.get("/v1/entities", params=NADIA).status_code == 401
    # a time is an ISO date, not a number the parser would take for Unix seconds (found by the fuzzing)
    for path in ("/v1/entities", "/v1/graph", "/v1/memories"):
        refused = client.get(path, params={**NADIA, "since": "1700000000"}, headers=acme)
        assert refused.status_code == 422 and "not a number" in refused.text


def test_reviews_and_conflicts_are_decided_over_http(api) -> None:
    client, acme, globex, service = api
    scope = Scope("acme", "nadia")
    old, _ = service.store.write_memory(scope, draft_memory("Nadia's choir meets on Tuesdays"), actor="test")
    new, _ = service.store.write_memory(scope, draft_memory("Nadia's choir meets on Wednesdays"), actor="test",
                                        review=(LinkDraft("UPDATES", old.id, 0.7, "the day changed"),))
    [review] = client.get("/v1/reviews", params=NADIA, headers=acme).json()
    assert (review["src_content"], review["dst_content"]) == (new.content, old.content)
    assert client.get("/v1/reviews", params=NADIA, headers=globex).json() == []
    refused = client.post(f"/v1/reviews/{review['review_id']}/accept", json=NADIA, headers=globex)
    assert refused.status_code == 422 and "no review" in refused.json()["detail"]
    accepted = client.post(f"/v1/reviews/{review['review_id']}/accept", json=NADIA, headers=acme)
    assert accepted.status_code == 200 and accepted.json()["status"] == "accepted"
    assert client.get(f"/v1/memories/{old.id}", params=NADIA, headers=acme).json()["id"] == new.id  # its id follows
    again = client.post(f"/v1/reviews/{review['review_id']}/reject", json=NADIA, headers=acme)
    assert again.status_code == 422 and "already accepted" in again.json()["detail"]

    a, _ = service.store.write_memory(scope, draft_memory("The choir concert is on the 3rd"), actor="test")
    b, _ = service.store.write_memory(scope, draft_memory("The choir concert is on the 5th"), actor="test",
                                      links=(LinkDraft("CONFLICTS_WITH", a.id, 0.9, "two dates given"),))
    [conflict] = client.get("/v1/conflicts", params=NADIA, headers=acme).json()["conflicts"]
    assert {conflict["src"]["content"], conflict["dst"]["content"]} == {a.content, b.content}
    assert client.get("/v1/conflicts", params=NADIA, headers=globex).json() == {"conflicts": []}
    assert client.post(f"/v1/conflicts/{conflict['link_id']}/resolve", json={**NADIA, "keep": b.id},
                       headers=globex).status_code == 404
    done = client.post(f"/v1/conflicts/{conflict['link_id']}/resolve", json={**NADIA, "keep": b.id}, headers=acme)
    assert done.status_code == 200 and done.json()["superseded"] == [a.id]
    assert client.get("/v1/conflicts", params=NADIA, headers=acme).json() == {"conflicts": []}


def test_memory_filters_citations_and_owners(api) -> None:
    client, acme, globex, _ = api
    listed = client.get("/v1/memories", params=NADIA, headers=acme).json()["results"]
    assert {m["memory"] for m in listed} >= {"Nadia works at Osterholz Bakery"}
    facts = client.get("/v1/memories", params={**NADIA, "kind": "fact"}, headers=acme).json()["results"]
    kinds = {m["id"]: client.get(f"/v1/memories/{m['id']}", params=NADIA, headers=acme).json()["kind"] for m in listed}
    assert facts and {m["id"] for m in facts} == {i for i, kind in kinds.items() if kind == "fact"}
    later = client.get("/v1/memories", params={**NADIA, "since": "2999-01-01T00:00:00Z"}, headers=acme).json()
    assert later == {"results": []}
    until = client.get("/v1/memories", params={**NADIA, "until": "2999-01-01T00:00:00Z"}, headers=acme).json()["results"]
    assert len(until) == len(listed)
    cited = client.get(f"/v1/memories/{listed[0]['id']}/citations", params=NADIA, headers=acme).json()
    assert cited and cited[0]["turn_id"]
    assert client.get(f"/v1/memories/{listed[0]['id']}/citations", params=NADIA, headers=globex).status_code == 404
    assert client.get("/v1/owners", headers=acme).json() == {"nadia": len(listed)}
    assert client.get("/v1/owners", headers=globex).json() == {}


def test_runs_show_evaluations_and_only_the_tenants_quality_checks(api) -> None:
    client, acme, globex, service = api
    page = "<!DOCTYPE html><html><body><h1>Scenario suite evaluation</h1></body></html>"
    run_id = service.store.record_eval_run("scenarios", {}, {"extraction_recall": 0.91}, [], report_html=page)
    service.store.record_eval_run("isolation", {}, {"leaks": 0.0}, [])
    failing = [QualityResult("memories", "no orphan links", False, 2, 2, ["acme:lnk_1", "acme:lnk_2"])]
    service.store.record_quality_run("acme", failing, utcnow())
    service.store.record_quality_run("globex", [QualityResult("memories", "ids unique", True, 0, 0, [])], utcnow())
    service.store.record_quality_run(None, failing, utcnow())  # the whole store's: no tenant's to see
    runs = client.get("/v1/runs", headers=acme).json()
    assert {(r["suite"], r["has_report"]) for r in runs["evaluations"]} == {("scenarios", True), ("isolation", False)}
    [quality] = runs["quality"]
    assert (quality["expectations"], quality["failed"]) == (1, 1)
    assert quality["failures"][0]["failing_ids"] == ["acme:lnk_1", "acme:lnk_2"]
    assert [q["failed"] for q in client.get("/v1/runs", headers=globex).json()["quality"]] == [0]
    report = client.get(f"/v1/runs/{run_id}/report", headers=acme)
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
    assert report.text == page
    assert client.get("/v1/runs/ev_unknown/report", headers=acme).status_code == 404
    assert client.get(f"/v1/runs/{run_id}/report").status_code == 401


def test_the_dashboard_is_served_from_the_package_with_its_policy(api) -> None:
    client = api[0]
    assert client.get("/ui", follow_redirects=False).headers["location"] == "/ui/"
    page = client.get("/ui/")
    assert page.status_code == 200 and "vendor/cytoscape.min.js" in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy and "default-src 'none'" in policy
    library = client.get("/ui/vendor/cytoscape.min.js")
    assert library.status_code == 200 and library.headers["content-type"].startswith("text/javascript")
    assert "The Cytoscape Consortium" in client.get("/ui/vendor/cytoscape.LICENSE").text
    assert client.get("/ui/main.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/ui/missing.js").status_code == 404
