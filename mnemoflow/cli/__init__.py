"""The `mnemoflow` command: parse, call the service, print. One module per group of commands."""

from mnemoflow.cli import ingest, memories, entities, rules, transfer, tree, lifecycle, maintenance, outbox, sql, admin, serve, evaluate, cluster  # noqa: F401, I001  (registers the commands in this order)
from mnemoflow.cli.app import app, main
from mnemoflow.cli.output import generation_line, place_in_document

__all__ = ["app", "generation_line", "main", "place_in_document"]
