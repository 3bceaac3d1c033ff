"""The dashboard in a real browser (the system's chromium, driven by playwright) against a real
`mnemoflow serve`: log in by key, find a memory, open an entity page and see its evolution, accept a
review, and see that another tenant's key shows none of it; every screenshot is checked for pixels
that say something was drawn, and the page may ask nothing of the network but the server.

The first test is the issue's check, end to end: a few memories through the HTTP API about a person
and a place that changes, then the entity routes, another tenant's 404, and the page's DOM."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mnemoflow.config import load_settings
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.models import LinkDraft
from mnemoflow.remote import ServerInfo, connect
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.eval.browser import chromium
from tests.serving import served

pytestmark = pytest.mark.slow

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PIXELS = """async (data) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + data;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width; canvas.height = img.height;
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0);
    const px = g.getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0, sum = 0, squares = 0;
    const colours = new Set();
    for (let i = 0; i < px.length; i += 4 * 3) {
        const y = 0.2126 * px[i] + 0.7152 * px[i + 1] + 0.0722 * px[i + 2];
        n += 1; sum += y; squares += y * y;
        colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
    }
    const mean = sum / n;
    return {width: canvas.width, height: canvas.height, std: Math.sqrt(squares / n - mean * mean),
            colours: colours.size};
}"""
ROWAN = Scope("larch", "rowan")


@pytest.fixture(scope="module")
def browser_path() -> str:
    return chromium()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser_path: str) -> Iterator[tuple[ServerInfo, Path]]:
    """A served home where Rowan already has a move, an employer and a review waiting (written before the
    server owns the store, as generation writes them)."""
    home = tmp_path_factory.mktemp("dashboard") / "home"
    with MemoryService(load_settings(home)) as service:
        for text in ("Rowan lives in Galway.", "Rowan works at Brackwater Ferries.", "Rowan moved to Sligo."):
            service.add_messages(ROWAN, text)
        old, _ = service.store.write_memory(ROWAN, draft_memory("Rowan's swim club trains on Mondays"), actor="test")
        service.store.write_memory(ROWAN, draft_memory("Rowan's swim club trains on Thursdays"), actor="test",
                                   review=(LinkDraft("UPDATES", old.id, 0.68, "the training day changed"),))
    with served(home) as info:
        yield info, home


def keys(home: Path) -> tuple[str, str]:
    with connect(load_settings(home)) as service:  # through the server
        return service.create_api_key("larch")[1], service.create_api_key("spruce")[1]


def not_blank(context: Any, png: bytes) -> dict[str, float]:
    """Measured in a blank page of the same browser: the screenshot's size, luminance spread and colours."""
    page = context.new_page()
    try:
        return page.evaluate(PIXELS, base64.b64encode(png).decode())
    finally:
        page.close()


def assert_drawn(context: Any, png: bytes, *, colours: int = 40) -> None:
    measured = not_blank(context, png)
    assert measured["width"] > 300 and measured["height"] > 200, measured
    assert measured["std"] > 8 and measured["colours"] >= colours, f"the screenshot looks blank: {measured}"


class Browser:
    """A fresh chromium profile whose pages may reach the server and nothing else."""

    def __init__(self, playwright: Any, executable: str, profile: Path, origin: str) -> None:
        self.asked: list[str] = []
        self.errors: list[str] = []
        self.context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, args=ARGS, headless=True,
            viewport={"width": 1280, "height": 860})
        self.context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(origin)
                           or route.request.url.startswith("data:") else (self.asked.append(route.request.url),
                                                                            route.abort()))

    def page(self) -> Any:
        page = self.context.new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        return page

    def close(self) -> None:
        self.context.close()


def test_the_issue_check_entities_graph_evolution_isolation_and_the_page(
        server: tuple[ServerInfo, Path], browser_path: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    info, home = server
    larch, spruce = keys(home)
    http = httpx.Client(base_url=info.url, timeout=120)
    own, other = {"Authorization": f"Bearer {larch}"}, {"Authorization": f"Bearer {spruce}"}
    who = {"user_id": "imogen"}
    texts = ["Imogen rents a flat in Whitby.", "Imogen volunteers at the Esk Valley lifeboat station.",
             "Imogen moved to Scarborough last month."]
    for text in texts:
        assert http.post("/v1/memories", json={**who, "text": text}, headers=own).status_code == 200

    listed = http.get("/v1/entities", params=who, headers=own).json()["entities"]
    named = {e["name"]: e["entity_id"] for e in listed}
    assert {"Imogen", "Whitby", "Scarborough"} <= set(named), named
    card = http.get(f"/v1/entities/{named['Imogen']}", params=who, headers=own).json()
    assert {n["entity"]["name"] for n in card["neighbours_by_memory"]} >= {"Whitby", "Scarborough"}
    graph = http.get(f"/v1/entities/{named['Imogen']}/graph", params={**who, "depth": 2}, headers=own).json()
    assert graph["elements"]["nodes"] and graph["elements"]["edges"]
    assert all("id" in n["data"] and "label" in n["data"] for n in graph["elements"]["nodes"])
    evolution = http.get(f"/v1/entities/{named['Imogen']}/evolution", params=who, headers=own).json()
    steps = [s["content"] for c in evolution["chains"] for s in c["steps"]]
    old = next(i for i, s in enumerate(steps) if "Whitby" in s)
    new = next(i for i, s in enumerate(steps) if "Scarborough" in s)
    assert old < new and evolution["chains"][0]["steps"][old]["replaced_by"][0]["content"] == steps[new]
    for path in ("", "/graph", "/evolution", "/memories"):
        assert http.get(f"/v1/entities/{named['Imogen']}{path}", params=who, headers=other).status_code == 404

    async def over_mcp() -> None:  # the same reads as an agent's tools
        async with Client(streamable_http_client(f"{info.url}/mcp", http_client=httpx2.AsyncClient(
                headers=own))) as client:
            found = json.loads((await client.call_tool("entities", {**who, "q": "imogen"})).content[0].text)
            assert [e["name"] for e in found["entities"]] == ["Imogen"]
            chains = json.loads((await client.call_tool("entity_evolution", {
                **who, "entity_id": named["Imogen"]})).content[0].text)["chains"]
            assert "Whitby" in chains[0]["steps"][0]["content"]

    anyio.run(over_mcp)
    with connect(load_settings(home)) as service:  # and through the server's RPC, as the CLI and Memory call it
        remote = service.entity_graph(Scope("larch", "imogen"), named["Imogen"], depth=2)
        assert {n.data.label for n in remote.elements.nodes} == {n["data"]["label"] for n in graph["elements"]["nodes"]}

    with sync_playwright() as playwright:
        browser = Browser(playwright, browser_path, tmp_path / "profile", info.url)
        try:
            page = browser.page()
            page.goto(f"{info.url}/ui/#key={larch}&user=imogen")
            page.wait_for_selector("#memory-list li.memory")
            shown = page.inner_text("#memory-list")
            assert "Imogen moved to Scarborough" in shown and "Esk Valley lifeboat station" in shown
            assert larch not in page.url  # the key left the address bar
            assert_drawn(browser.context, page.screenshot())
        finally:
            browser.close()
    assert browser.asked == [] and browser.errors == []


def test_log_in_find_open_an_entity_accept_a_review_and_see_nothing_with_another_key(
        server: tuple[ServerInfo, Path], browser_path: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    info, home = server
    larch, spruce = keys(home)
    found = httpx.get(f"{info.url}/v1/entities", params={"user_id": "rowan", "q": "rowan"},
                      headers={"Authorization": f"Bearer {larch}"}, timeout=60).json()["entities"]
    rowan = next(e["entity_id"] for e in found if e["name"] == "Rowan")
    shots = tmp_path / "shots"
    shots.mkdir()
    with sync_playwright() as playwright:
        browser = Browser(playwright, browser_path, tmp_path / "profile", info.url)
        try:
            page = browser.page()
            page.goto(f"{info.url}/ui/")
            page.fill("#key", "mf_not-a-key")  # a wrong key is a message, not a blank page
            page.click("#login-form button")
            page.wait_for_selector(".message.error")
            assert "refused" in page.inner_text("#messages") and page.is_visible("#login")
            page.fill("#key", larch)
            page.click("#login-form button")
            page.wait_for_selector("#session:not([hidden])")
            page.fill("#owner", "rowan")
            page.dispatch_event("#owner", "change")
            page.wait_for_selector("#memory-list li.memory")

            page.fill("input[name=q]", "which day does the swim club train")  # find a memory
            page.click("form.filters button[type=submit]")
            page.wait_for_selector("#memory-status:has-text('match')")
            first = page.locator("#memory-list li.memory").first
            assert "swim club trains on" in first.inner_text()
            first.locator("button").click()
            page.wait_for_selector("#memory-list .details h4")
            assert "History" in first.inner_text() and "Citations" in first.inner_text()
            page.screenshot(path=str(shots / "memories.png"))

            page.click("nav a[data-view=graph]")
            page.wait_for_selector("#graph[data-drawn]")
            assert int(page.get_attribute("#graph", "data-nodes")) >= 3
            assert_drawn(browser.context, page.locator("#graph").screenshot(), colours=20)
            page.screenshot(path=str(shots / "graph.png"))
            page.click("#entity-list a:text-is('Rowan')")  # the entity page
            page.wait_for_selector("#evolution ol.evolution")
            evolution = page.inner_text("#evolution")
            assert evolution.index("Rowan lives in Galway") < evolution.index("Rowan moved to Sligo")
            assert "replaced" in evolution and page.inner_text("#entity-name") == "Rowan"
            assert "Brackwater Ferries" in page.inner_text("#neighbours")
            page.wait_for_selector("#entity-graph[data-drawn]")
            page.screenshot(path=str(shots / "entity.png"), full_page=True)

            page.click("nav a[data-view=review]")
            page.wait_for_selector("#reviews li.review")
            assert "Rowan's swim club trains on Thursdays" in page.inner_text("#reviews")
            page.click("#reviews li.review button.primary")
            page.wait_for_selector(".message.info")
            page.wait_for_selector("#reviews .empty")
            page.screenshot(path=str(shots / "review.png"))

            page.click("#sign-out")  # another tenant's key: nothing of larch anywhere
            page.fill("#key", spruce)
            page.click("#login-form button")
            page.wait_for_selector("#session:not([hidden])")
            page.fill("#owner", "rowan")
            page.dispatch_event("#owner", "change")
            page.wait_for_selector("#reviews .empty")  # the view it was on when signed out
            page.click("nav a[data-view=memories]")
            page.wait_for_selector("#memory-list .empty")
            for view in ("graph", "review"):
                page.click(f"nav a[data-view={view}]")
                page.wait_for_selector(f"#view-{view}:not([aria-busy])")
            page.click("nav a[data-view=graph]")
            page.wait_for_selector("#graph[data-nodes='0']")
            assert "Rowan" not in page.inner_text("main") and "Galway" not in page.inner_text("main")
            page.goto(f"{info.url}/ui/#/entity/{rowan}")  # larch's entity, asked with spruce's key: a message
            page.wait_for_selector(".message.error")
            assert "404: no entity" in page.inner_text("#messages") and "Could not show" in page.inner_text("main")

            for name in ("memories", "graph", "entity", "review"):
                assert_drawn(browser.context, (shots / f"{name}.png").read_bytes())
        finally:
            browser.close()
    assert browser.asked == []
    # the refusals the test asked for (the wrong key, another tenant's entity) are the only errors
    assert [e for e in browser.errors if "401" not in e and "404" not in e] == []

    with connect(load_settings(home)) as service:  # the accepted review was applied
        [decided] = service.review_items(ROWAN, status="accepted")
        assert service.get(ROWAN, decided.dst).id == decided.src and service.get(ROWAN, decided.src).is_latest
