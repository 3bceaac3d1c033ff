"""A loopback stand-in for an OpenAI-compatible chat-completions endpoint (an outside service the
tests cannot reach). It answers from a script of replies, the last one repeating, and keeps every
request body so tests can see what the engine sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.loopback import LoopbackServer


@dataclass(frozen=True)
class Reply:
    """One scripted answer: `content` (or what it returns for the request body) becomes the assistant
    message; a non-200 status sends an error."""

    content: str | Callable[[dict[str, Any]], str] = '{"candidates": []}'
    status: int = 200
    delay_s: float = 0.0


def candidates(*items: dict[str, Any]) -> str:
    """The assistant message for these candidates, each filled up with schema defaults."""
    base = {"should_store": True, "kind": "fact", "confidence": 0.9, "salience": 0.5, "entities": [],
            "source_turn_ids": [], "event_start_at": None, "event_end_at": None, "temporal_text": None}
    return json.dumps({"candidates": [{**base, **item} for item in items]})


class ChatDouble(LoopbackServer):
    def __init__(self, port: int) -> None:
        self.requests: list[dict[str, Any]] = []
        self._replies: list[Reply] = [Reply()]
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> JSONResponse:
            body = await request.json()
            self.requests.append(body)
            reply = self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]
            await asyncio.sleep(reply.delay_s)
            if reply.status != 200:
                return JSONResponse({"error": {"message": "scripted failure"}}, status_code=reply.status)
            return JSONResponse({
                "id": "chatcmpl-double", "object": "chat.completion", "model": "double",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "refusal": None, "content": reply.content(body)
                                         if callable(reply.content) else reply.content}}],
            })

        super().__init__(port, app)

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with `replies`, in order; the last one keeps answering."""
        self._replies = list(replies)
        self.requests.clear()
