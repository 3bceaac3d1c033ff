"""Drafting memories: what an engine sees and proposes (candidates), the rule-based and LLM engines,
follow-up answers, memories written directly or as messages, and inferences over several memories."""
