"""Any OpenAI-compatible embeddings endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...)."""

from __future__ import annotations

import numpy as np
import openai

from mnemoflow.embedding.base import normalize
from mnemoflow.errors import EmbeddingUnavailableError, TerminalError

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAICompatibleEmbedder:
    """Batched calls to `/embeddings`; transport failures become `EmbeddingUnavailableError`."""

    def __init__(
        self, *, model: str, dim: int, base_url: str | None, api_key: str | None, timeout_s: float,
        batch_size: int = 64,
    ) -> None:
        self.model = model
        self.dim = dim
        self.batch_size = batch_size
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=2
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                response = self._client.embeddings.create(model=self.model, input=batch)
            except (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
                    openai.InternalServerError) as exc:
                raise EmbeddingUnavailableError(f"embedding endpoint unavailable: {exc}") from exc
            except openai.APIStatusError as exc:
                raise TerminalError(f"embedding endpoint refused the request: {exc}") from exc
            out.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        vectors = np.asarray(out, dtype=np.float32)
        if vectors.shape[1] != self.dim:
            raise TerminalError(f"{self.model} returned {vectors.shape[1]}-d vectors, expected {self.dim}")
        return normalize(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]
