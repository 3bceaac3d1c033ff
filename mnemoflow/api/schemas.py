"""What the HTTP API takes and answers, as its OpenAPI schema states it.

The schema says what the server checks, so that a client (or a fuzzer) reading it sends what is
accepted and expects what comes back: ids match `Scope`'s alphabet, a body names an owner, flags
are JSON booleans and numbers JSON numbers (`"5"` and `true` are not 5), and every refusal has
its declared shape and status.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from mnemoflow.models import Mem0Memory
from mnemoflow.recall.config import PresetName
from mnemoflow.results import Message, SaidAt
from mnemoflow.storage.scope import ID_PATTERN

OWNER = "Name a user_id, an agent_id or a run_id (or several); a container narrows them."
OWNERS = ("user_id", "agent_id", "run_id")
NOT_BLANK = r"\S"  # unanchored: some character that is not white space


def _json_number(value: Any) -> Any:
    if isinstance(value, str | bool):
        raise ValueError("must be a JSON number")  # noqa: TRY004  (pydantic reports ValueError as a 422)
    return value


# after an int's or a float's bounds in `Annotated` (before them, the schema would say `ge`, not `minimum`):
# 2 and 2.0 are JSON Schema's integer 2, "2" and true are not
JSON_NUMBER = BeforeValidator(_json_number)
JsonBool = Annotated[bool, Field(strict=True)]  # true and false; not 0 or "yes"


def _not_a_number(value: Any) -> Any:
    if isinstance(value, int | float) or (isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+(\.\d*)?\s*", value)):
        raise ValueError("a time is an ISO 8601 date or date and time, not a number")
    return value


# a time in a query string as its schema says it (`date-time`): pydantic would read "1700000000" as Unix seconds
IsoTime = Annotated[datetime, BeforeValidator(_not_a_number)]


# ---------------------------------------------------------------------- rules across fields, stated in the schema
def _named(key: str) -> dict[str, Any]:
    return {"required": [key], "properties": {key: {"type": "string", "pattern": ID_PATTERN}}}


NAMES_AN_OWNER = {"anyOf": [_named(k) for k in OWNERS]}
ONE_USER = {**_named("user_id"), "not": {"anyOf": [_named(k) for k in ("agent_id", "run_id", "container")]}}
OWNER_HERE_OR_IN_FILTERS = {"anyOf": [_named(k) for k in OWNERS] + [
    {"required": ["filters"], "properties": {"filters": _named(k)}} for k in OWNERS]}
MESSAGES_OR_TEXT = {"oneOf": [{"required": ["messages"], "properties": {"messages": {"not": {"type": "null"}}}},
                              {"required": ["text"], "properties": {"text": {"type": "string"}}}]}
TEXT_OR_METADATA = {"anyOf": [{"required": ["text"], "properties": {"text": {"type": "string"}}},
                              {"required": ["metadata"], "properties": {"metadata": {"type": "object"}}}]}


def rules(*fragments: dict[str, Any]) -> ConfigDict:
    """A model config whose JSON schema also states `fragments` (rules the service checks across fields)."""
    def extend(schema: dict[str, Any]) -> None:
        schema["allOf"] = list(fragments)

    extra: Callable[[dict[str, Any]], None] = extend
    return ConfigDict(json_schema_extra=extra)  # type: ignore[typeddict-item]


# ---------------------------------------------------------------------- requests
class Scoped(BaseModel):
    """A request body that names whose memories it is about (the tenant comes from the key): a user,
    an agent or a run, optionally narrowed by a container (see README, "Scopes")."""

    model_config = rules(NAMES_AN_OWNER)

    user_id: str | None = Field(None, pattern=ID_PATTERN, description=OWNER)
    agent_id: str | None = Field(None, pattern=ID_PATTERN)
    run_id: str | None = Field(None, pattern=ID_PATTERN)
    container: str | None = Field(None, pattern=ID_PATTERN)


class EventsIn(Scoped):
    """Conversation turns are a user's: events name a user and nothing narrower."""

    model_config = rules(ONE_USER)

    turns: list[dict[str, Any]] = Field(description="Turns in the transcript format (session_id, turn_id, speaker, "
                                                    "ts, text, optional role and metadata).")
    wait: JsonBool = Field(True, description="Return once the new turns are embedded.")


class MemoryIn(Scoped):
    """An owner, and the memory as `messages` or as `text` (one of them)."""

    model_config = rules(NAMES_AN_OWNER, MESSAGES_OR_TEXT)

    messages: Annotated[str, Field(pattern=NOT_BLANK)] | Annotated[list[Message], Field(min_length=1)] | None = Field(
        None, description="A statement, or a conversation: {role, content, optional name and timestamp} turns.")
    text: str | None = Field(None, pattern=NOT_BLANK, description="A statement (the same as a string in `messages`).")
    timestamp: SaidAt | None = Field(None, description="When it was said, for the turns that carry no timestamp "
                                                       "of their own: ISO 8601 (UTC without an offset); default now.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    infer: JsonBool = Field(True, description="Read the messages into memories like an ingested conversation "
                                              "(relationships decided); false keeps each message as written.")


class UpdateIn(Scoped):
    """An owner, and the new text, new metadata or both."""

    model_config = rules(NAMES_AN_OWNER, TEXT_OR_METADATA)

    text: str | None = Field(None, pattern=NOT_BLANK, description="The new text: a new version that UPDATES the "
                                                                  "memory.")
    metadata: dict[str, Any] | None = None


class RecallIn(Scoped):
    query: str = Field(pattern=NOT_BLANK, description="What to recall: some text, not only white space.")
    k: Annotated[int, Field(ge=1), JSON_NUMBER] | None = None
    token_budget: Annotated[int, Field(ge=16), JSON_NUMBER] | None = None
    kinds: list[Literal["memory", "chunk", "summary", "profile"]] | None = None
    include_history: JsonBool = Field(
        False, description="Also return memories that are no longer current (superseded, expired), marked; deleted "
        "memories never.")
    preset: PresetName | None = Field(None, description="A named recall configuration (default: the server's).")


class PinIn(Scoped):
    pinned: JsonBool = Field(True, description="False lets decay judge the memory again.")


class SearchIn(Scoped):
    """An owner, named in the body or (as mem0's v2 search does) in `filters`."""

    model_config = rules(OWNER_HERE_OR_IN_FILTERS)

    query: str = Field(pattern=NOT_BLANK, description="What to look for: some text, not only white space.")
    limit: Annotated[int, Field(ge=1, le=100), JSON_NUMBER] = 10
    filters: dict[str, Any] | None = Field(
        None, description="mem0's filters: metadata, time and kind conditions with eq/ne/gt/gte/lt/lte/in/nin/"
        "contains/icontains/*, AND/OR/NOT; user_id, agent_id, run_id given here name the scope too.")
    threshold: Annotated[float, Field(ge=0, le=1), JSON_NUMBER] | None = Field(
        None, description="Least cosine similarity to the query.")


class ReviewDecisionIn(Scoped):
    as_type: Literal["UPDATES", "EXTENDS", "DERIVES", "RELATES_TO", "DUPLICATE_OF", "CONFLICTS_WITH"] | None = Field(
        None, description="Accept it as another link type than the one proposed.")


class ConflictDecisionIn(Scoped):
    keep: str | None = Field(None, min_length=1, description="The memory to keep (it UPDATES the other one); "
                                                              "omitted or null: keep both.")


# ---------------------------------------------------------------------- answers
class EventsOut(BaseModel):
    turns_added: int
    chunks_added: int
    pending_embeddings: int
    errors: list[str]


class Mem0Results(BaseModel):
    """mem0's `{"results": [...]}`."""

    results: list[Mem0Memory]


class ApiError(BaseModel):
    """What every refusal of this API says, but a request its schema rejects (422 with FastAPI's `detail` list)."""

    detail: str
    code: str | None = Field(None, description="What kind of refusal, for programs: not_found, bad_input, bad_scope, "
                                               "forbidden, rate_limited, busy, unavailable, error.")


class RateLimited(ApiError):
    """A key over its request budget (429, with a Retry-After header in whole seconds)."""

    retry_after_s: float = Field(description="Seconds until the key's budget holds a request again.")
    limit: Literal["read", "write"] = Field(description="Which of the key's budgets is spent.")


class InvalidField(BaseModel):
    """One part of a request its schema rejects (FastAPI's validation error)."""

    loc: list[str | int]
    msg: str
    type: str
    input: Any = None
    ctx: dict[str, Any] | None = None


class InvalidRequest(BaseModel):
    """A request its schema rejects, part by part (FastAPI's 422)."""

    detail: list[InvalidField]


REFUSALS = {400: "The body is not JSON: not JSON text, not UTF-8, or sent as a content type other than JSON (a "
                 "body with no content type is read as JSON).", 401: "No valid, unrevoked API key.",
            404: "Nothing of that id in the scope named (another tenant's ids are not found either).",
            403: "The key may not do this (debug output needs an admin key).",
            422: "A request the schema rejects (FastAPI's `detail` list), or one the service refuses (a scope it "
                 "cannot serve, filters it cannot read).",
            429: "The key spent its read or write budget (rate_limit_per_s, rate_limit_burst); retry after the "
                 "seconds Retry-After says.",
            503: "The store is busy or unavailable; try again."}
RETRY_AFTER = {"Retry-After": {"description": "Whole seconds to wait before the next request.",
                               "schema": {"type": "string", "pattern": "^[0-9]+$"}}}


def refusals(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The refusals a route declares, by status, with their shapes."""
    shapes: dict[int, Any] = {422: InvalidRequest | ApiError, 429: RateLimited}
    return {c: {"model": shapes.get(c, ApiError), "description": REFUSALS[c],
                **({"headers": RETRY_AFTER} if c == 429 else {})} for c in codes}
