"""The chat model client every LLM step shares: memory generation, relation judging, summaries."""
