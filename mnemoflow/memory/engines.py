"""Which generation engine the settings ask for: the rules alone, or an LLM that falls back on them."""

from __future__ import annotations

from mnemoflow.config import Settings
from mnemoflow.errors import ConfigError
from mnemoflow.memory.candidates import GenerationEngine
from mnemoflow.memory.llm_engine import LLMEngine
from mnemoflow.memory.rules import RuleEngine


def generation_engine(settings: Settings) -> GenerationEngine:
    """RuleEngine for llm_provider 'none'; otherwise an LLMEngine whose failed turns the rules take over."""
    if settings.llm_provider == "none":
        return RuleEngine()
    base_url = settings.llm_base_url or settings.openai_base_url
    if not settings.llm_model:
        raise ConfigError("llm_provider 'openai' needs llm_model (MNEMOFLOW_LLM_MODEL)")
    if not base_url:
        raise ConfigError("llm_provider 'openai' needs llm_base_url or openai_base_url (MNEMOFLOW_LLM_BASE_URL)")
    key = settings.llm_api_key or settings.openai_api_key
    return LLMEngine(base_url=base_url, model=settings.llm_model, fallback=RuleEngine(),
                     api_key=key.get_secret_value() if key else None, timeout_s=settings.llm_timeout_s,
                     max_retries=settings.llm_max_retries)
