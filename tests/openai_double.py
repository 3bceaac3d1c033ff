"""A loopback stand-in for an OpenAI-compatible embeddings endpoint (an outside service the tests
cannot reach). It answers with the real offline MiniLM, so what it returns is meaningful, and
counts the texts it was asked to embed."""

from __future__ import annotations

from fastapi import FastAPI
from pydantic import BaseModel

from mnemoflow.embedding.local import LocalEmbedder
from tests.loopback import LoopbackServer


class EmbeddingRequest(BaseModel):
    model: str
    input: list[str] | str


class OpenAIDouble(LoopbackServer):
    def __init__(self, port: int) -> None:
        self.texts_embedded = 0
        embedder = LocalEmbedder()
        app = FastAPI()

        @app.post("/v1/embeddings")
        def embeddings(request: EmbeddingRequest) -> dict:
            texts = [request.input] if isinstance(request.input, str) else request.input
            self.texts_embedded += len(texts)
            vectors = embedder.embed(texts)
            return {"object": "list", "model": request.model,
                    "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0}}

        super().__init__(port, app)
