"""Memories: drafting them (generate), the language the rules read (english), what a new memory does to
the ones a scope holds (relate), and the pipeline, worker, profiles, summaries, topics and retention."""
