"""One root exception; `transient` tells retry machinery (Prefect, the outbox) whether to try again."""

from __future__ import annotations


class MnemoflowError(Exception):
    """Root of every error mnemoflow raises on purpose."""

    transient = False


class TransientError(MnemoflowError):
    """Worth retrying: a busy file, an endpoint that timed out."""

    transient = True


class TerminalError(MnemoflowError):
    """Retrying will not help: bad input, bad configuration."""


class ConfigError(TerminalError):
    """Settings that cannot work together."""


class UnreachableError(ConfigError):
    """A configured service (the store_url's database, the vectors_url's bucket) cannot be reached at
    start: a setting to fix, said in one line before anything is written."""


class ScopeError(TerminalError):
    """A missing or malformed tenant/user scope."""


class NotFoundError(TerminalError):
    """The id does not exist inside the caller's scope (which is all the caller may know)."""


class BadInputError(TerminalError):
    """Input that cannot be read; recorded in `ingest_errors` by ingestion."""


class StoreBusyError(TransientError):
    """Another process holds the DuckDB file for longer than the configured wait."""


class StoreUnavailableError(TransientError):
    """The shared store (PostgreSQL, the vectors' bucket) stopped answering; the request may be retried."""


class ServerUnavailableError(TransientError):
    """The home's server stopped answering in the middle of a call."""


class EmbeddingUnavailableError(TransientError):
    """The embedding provider could not be reached or failed; rows stay pending."""


class VectorsUnavailableError(EmbeddingUnavailableError):
    """The vectors' bucket (vectors_url) could not be reached: rows wait for their vectors as when the
    embedder is down, and recall answers from the system of record's keyword search."""


class IntegrityError(TerminalError):
    """The commit chain or a row recorded by it does not verify."""


class ForbiddenError(TerminalError):
    """The caller is known but may not do this (debug output without an admin key)."""


class RateLimitedError(TransientError):
    """An API key spent its request budget: try again after `retry_after_s` seconds."""

    def __init__(self, message: str, retry_after_s: float = 1.0, kind: str = "read") -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.kind = kind
