"""Ingestion: everything from a path, an event or a configured source to stored documents, turns and
chunks with their derived work (memories, vectors). `sequence` is the one place the stages are put
in order; the service layer and the Prefect flows run it. What runs report is in `mnemoflow.reports`."""
