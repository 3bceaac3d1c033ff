"""Embedding providers behind one protocol, chosen by settings."""

from __future__ import annotations

from mnemoflow.config import Settings
from mnemoflow.embedding.base import Embedder
from mnemoflow.errors import ConfigError

__all__ = ["Embedder", "create_embedder", "embedding_dimensions"]


def embedding_dimensions(settings: Settings) -> int:
    """The vector size of the configured model, known without loading it."""
    if settings.embedding_provider == "local":
        from mnemoflow.embedding.local import LOCAL_DIM, LOCAL_MODEL

        if settings.resolved_embedding_model != LOCAL_MODEL:
            raise ConfigError(f"the local provider ships {LOCAL_MODEL} only; got {settings.resolved_embedding_model}")
        return LOCAL_DIM
    from mnemoflow.embedding.openai_compat import KNOWN_DIMENSIONS

    dim = settings.embedding_dimensions or KNOWN_DIMENSIONS.get(settings.resolved_embedding_model)
    if dim is None:
        raise ConfigError(
            f"set MNEMOFLOW_EMBEDDING_DIMENSIONS: the size of {settings.resolved_embedding_model} vectors is not known"
        )
    return dim


def create_embedder(settings: Settings) -> Embedder:
    if settings.embedding_provider == "local":
        embedding_dimensions(settings)
        if settings.embedding_runtime == "onnx":
            from mnemoflow.embedding.onnx_export import ensure_onnx_model
            from mnemoflow.embedding.onnx_runtime import OnnxEmbedder

            return OnnxEmbedder(ensure_onnx_model(settings.model_cache_dir), batch_size=settings.embedding_batch_size,
                                batch_tokens=settings.embedding_batch_tokens)
        from mnemoflow.embedding.local import LocalEmbedder

        return LocalEmbedder(batch_size=settings.embedding_batch_size)
    from mnemoflow.embedding.openai_compat import OpenAICompatibleEmbedder

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return OpenAICompatibleEmbedder(
        model=settings.resolved_embedding_model, dim=embedding_dimensions(settings), base_url=settings.openai_base_url,
        api_key=key, timeout_s=settings.openai_timeout_s, batch_size=settings.embedding_batch_size,
    )
