"""A loopback stand-in for an OpenAI-compatible chat-completions endpoint (an outside service the
tests cannot reach). It answers from a script of replies, the last one repeating, and keeps every
request body so tests can see what the engine sent."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


@dataclass(frozen=True)
class Reply:
    """One scripted answer: `content` becomes the assistant message; a non-200 status sends an error."""

    content: str = '{"candidates": []}'
    status: int = 200
    delay_s: float = 0.0


def candidates(*items: dict[str, Any]) -> str:
    """The assistant message for these candidates, each filled up with schema defaults."""
    base = {"should_store": True, "kind": "fact", "confidence": 0.9, "salience": 0.5, "entities": [],
            "source_turn_ids": [], "event_start_at": None, "event_end_at": None, "temporal_text": None}
    return json.dumps({"candidates": [{**base, **item} for item in items]})


class ChatDouble:
    def __init__(self, port: int) -> None:
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self._replies: list[Reply] = [Reply()]
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> JSONResponse:
            self.requests.append(await request.json())
            reply = self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]
            await asyncio.sleep(reply.delay_s)
            if reply.status != 200:
                return JSONResponse({"error": {"message": "scripted failure"}}, status_code=reply.status)
            return JSONResponse({
                "id": "chatcmpl-double", "object": "chat.completion", "model": "double",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply.content, "refusal": None}}],
            })

        self.app = app

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with `replies`, in order; the last one keeps answering."""
        self._replies = list(replies)
        self.requests.clear()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("chat double did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)  # type: ignore[union-attr]
