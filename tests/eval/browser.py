"""Open a report page in a real browser (the system's chromium, driven by playwright) and read back
what it drew: every figure's rendered size and how many bars and points it shows."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
READ_FIGURES = """() => Object.fromEntries([...document.querySelectorAll('figure[data-figure]')].map(figure => {
    const svg = figure.querySelector('svg');
    const box = svg.getBoundingClientRect();
    const inside = el => { const b = el.getBoundingClientRect();
        return b.left >= box.left - 1 && b.right <= box.right + 1 && b.top >= box.top - 1 && b.bottom <= box.bottom + 1; };
    const bars = [...svg.querySelectorAll('rect.bar')], points = [...svg.querySelectorAll('circle.point')];
    return [figure.dataset.figure, {width: box.width, height: box.height, bars: bars.length, points: points.length,
        all_inside: [...bars, ...points].every(inside),
        bar_heights: bars.map(b => [Number(b.dataset.value), b.getBoundingClientRect().height])}];
}))"""


def chromium() -> str:
    """The system's chromium; the test skips, saying why, where there is none."""
    path = next((found for name in CHROMIUM if (found := shutil.which(name))), None)
    if path is None:
        pytest.skip("no chromium binary on PATH (apt-get install chromium): the report page is checked in a "
                    "real browser")
    return path


def rendered_figures(page_path: Path, executable: str) -> dict[str, dict[str, Any]]:
    """The page's figures by id, as the browser at `executable` laid them out; fails if the page asks
    the network for anything."""
    from playwright.sync_api import Route, sync_playwright

    asked: list[str] = []

    def refuse_the_network(route: Route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            asked.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            page = browser.new_page()
            page.route("**/*", refuse_the_network)
            page.goto(page_path.as_uri())
            figures = page.evaluate(READ_FIGURES)
        finally:
            browser.close()
    assert not asked, f"the page is not self-contained: it asked for {asked}"
    return figures
