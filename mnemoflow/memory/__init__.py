"""Memories: drafting, (later) generation, relationships, entities, lifecycle."""
