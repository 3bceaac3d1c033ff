"""Drafting memories: what an engine sees and proposes (candidates), the rule-based and LLM engines,
follow-up answers, and memories written directly or as messages."""
