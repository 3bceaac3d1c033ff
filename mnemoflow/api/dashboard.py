"""The web dashboard at `/ui/`: static files shipped inside the package (`api/ui/`), no build step,
nothing from the network. The page holds no data of its own: it asks for a tenant API key (a
`#key=...` fragment fills it) and reads the tenant routes with it, like any other client, so it
shows that key's tenant and nothing else.

Its Content-Security-Policy lets the page load only what this server serves (scripts and styles
from the package, answers from the API), so a page that tried to reach the network would fail.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

UI_DIR = Path(__file__).parent / "ui"
PREFIX = "/ui"
# inline styles: the report pages shown in a sandboxed srcdoc frame carry their own <style>
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
          "connect-src 'self'; font-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
          "frame-ancestors 'none'")


class DashboardFiles(StaticFiles):
    """The package's dashboard files, each answered with the dashboard's policy headers."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update({"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff",
                                 "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"})
        return response


def mount_dashboard(app: FastAPI) -> None:
    @app.get(PREFIX, include_in_schema=False)
    def to_dashboard() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/")

    app.mount(PREFIX, DashboardFiles(directory=UI_DIR, html=True), name="ui")
