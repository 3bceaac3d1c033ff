"""Which generation engine the settings ask for: the rules alone, or an LLM that falls back on them."""

from __future__ import annotations

from mnemoflow.config import Settings
from mnemoflow.memory.generate.candidates import GenerationEngine
from mnemoflow.llm.chat import chat_options
from mnemoflow.memory.generate.llm_engine import LLMEngine
from mnemoflow.memory.generate.rules import RuleEngine


def generation_engine(settings: Settings) -> GenerationEngine:
    """RuleEngine for llm_provider 'none'; otherwise an LLMEngine whose failed turns the rules take over."""
    options = chat_options(settings)
    return RuleEngine() if options is None else LLMEngine(**options, fallback=RuleEngine())
