"""Debug output over HTTP (raw vectors, internal scores): admin keys only (403 for any other key), and
bounded in size (`recall.debug`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Request
from pydantic import Field

from mnemoflow.api.http import Key
from mnemoflow.api.schemas import JSON_NUMBER, JsonBool, Scoped
from mnemoflow.errors import ForbiddenError
from mnemoflow.recall.debug import DebugRecall
from mnemoflow.storage import Scope


class DebugRecallIn(Scoped):
    query: str = Field(min_length=1)
    k: Annotated[int, Field(ge=1, le=100), JSON_NUMBER] = 10
    vectors: JsonBool = Field(False, description="Also return the raw vectors of the query and of each item.")


def add_debug_routes(keyed: Callable[..., Any]) -> None:
    @keyed("POST", "/v1/debug/recall", response_model=DebugRecall, refuses=(400, 403), kind="read")
    def debug_recall(request: Request, body: DebugRecallIn, key: Key) -> DebugRecall:
        """Recall's top items with their internal scores and, if asked, raw vectors (admin keys only; at most
        `debug_max_items` items)."""
        if not key.admin:
            raise ForbiddenError("debug output (raw vectors, internal scores) needs an admin key "
                                 "(`mnemoflow keys create --tenant T --admin`)")
        scope = Scope(key.tenant_id, body.user_id, body.agent_id, body.run_id, body.container)
        return request.app.state.service.debug_recall(scope, body.query, k=body.k, vectors=body.vectors)
