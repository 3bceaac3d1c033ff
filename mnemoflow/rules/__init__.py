"""Procedural memory: rules an agent's planner and tool selector obey (`model`: their slots and states;
`evaluate` and `tools`: what they make of a context; `text` and `drafts`: rule memories read into DRAFT
rules; `service`: the service methods)."""
