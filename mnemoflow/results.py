"""What the memory verbs take and return beyond a single memory, in mem0's shapes.

Each result is a pydantic model (so it crosses the remote client) that also reads like mem0's
dicts (`Mem0Mapping`): `result["results"][0]["memory"]` works beside `result.results[0].memory`,
and `result.mem0()` is the plain dict mem0 returns, for `json.dumps`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from functools import cache
from typing import Annotated, Any, Literal, get_args, overload

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError

from mnemoflow.errors import BadInputError
from mnemoflow.models import Mem0Mapping, MemoryItem
from mnemoflow.timeutil import UtcDatetime

Event = Literal["ADD", "UPDATE", "DELETE", "NONE"]
Role = Literal["user", "assistant", "system", "tool"]  # mem0's roles (OpenAI's chat roles)


def _not_a_number(value: Any) -> Any:
    """A number would be read as Unix seconds or milliseconds by its size: refused, as the schema says."""
    if isinstance(value, int | float):
        raise ValueError("a timestamp is an ISO 8601 date and time, not a number")  # noqa: TRY004  (a 422)
    return value


SaidAt = Annotated[UtcDatetime, BeforeValidator(_not_a_number)]  # when something was said: ISO 8601, no number


class Message(BaseModel):
    """One turn given to `add`: who said it and what. `timestamp` (or `ts`) is when it was said;
    without it, now."""

    model_config = ConfigDict(extra="ignore")

    role: Role = Field("user", description="user, assistant, system (not read) or tool.")
    content: str = Field(pattern=r"\S", description="What was said: some text, not only white space.")
    name: str | None = Field(None, description="Who said it; for the user's turns defaults to the user_id.")
    timestamp: SaidAt | None = Field(
        None, validation_alias=AliasChoices("timestamp", "ts"), description="ISO 8601 (UTC without an offset).")


def as_message(message: Message | dict[str, Any], n: int) -> Message:
    """The `n`th message given to `add`, read: BadInputError that names what is wrong with it and what
    would be right (the same words whichever interface it came through)."""
    if isinstance(message, Message):
        return message
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        raise BadInputError(f"message {n} is not {{'role': ..., 'content': '<text>'}} (only text content is "
                            f"read); got {str(message)[:80]!r}")
    try:
        return Message.model_validate(message)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        if field == "role":
            problem = f"role must be one of {', '.join(get_args(Role))}; got {first['input']!r}"
        elif field == "content" and first["type"] == "string_pattern_mismatch":
            problem = "content is empty: a message needs some text"
        else:
            problem = f"{field}: {first['msg']}"
        raise BadInputError(f"message {n}: {problem}") from None


@cache
def _said_at() -> TypeAdapter[datetime | None]:
    return TypeAdapter(SaidAt | None)


def said_at(value: datetime | str | None) -> datetime | None:
    """`add`'s `timestamp`, read like a message's: BadInputError with the same words whichever interface."""
    try:
        return _said_at().validate_python(value)
    except ValidationError as exc:
        raise BadInputError(f"timestamp: {exc.errors()[0]['msg']}") from None


class MemoryEvent(Mem0Mapping, BaseModel):
    """What `add` did to one memory. ADD: a new memory. UPDATE: a new version (`id`) that supersedes
    `previous_id` (kept in history). NONE: already held (the held memory, reinforced). `review`: memories
    a relationship to which waits for a person (`mnemoflow review`)."""

    id: str
    memory: str
    event: Event
    previous_memory: str | None = None
    previous_id: str | None = None
    review: list[str] = Field(default_factory=list)

    def mem0(self) -> dict[str, Any]:
        view: dict[str, Any] = {"id": self.id, "memory": self.memory, "event": self.event}
        if self.previous_memory is not None:
            view["previous_memory"] = self.previous_memory
        return view


class AddResult(Mem0Mapping, BaseModel):
    """Every memory an `add` touched, in order (`results`, mem0's shape), with the first of them whole
    (`memory`) and whether anything new was written (`created`)."""

    results: list[MemoryEvent]
    memory: MemoryItem | None = None
    created: bool = False

    def mem0(self) -> dict[str, Any]:
        return {"results": [e.mem0() for e in self.results]}


class MemoryList(Mem0Mapping, BaseModel):
    """Memories, best or newest first: a sequence of `MemoryItem` to mnemoflow code (`for m in ...`,
    `found[0].content`), mem0's `{"results": [...]}` to mem0 code."""

    results: list[MemoryItem]

    def mem0(self) -> dict[str, Any]:
        return {"results": [m.mem0() for m in self.results]}

    def __iter__(self) -> Iterator[MemoryItem]:  # type: ignore[override]
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @overload
    def __getitem__(self, key: int) -> MemoryItem: ...

    @overload
    def __getitem__(self, key: str) -> Any: ...

    def __getitem__(self, key: int | str) -> Any:
        return self.results[key] if isinstance(key, int) else super().__getitem__(key)


class UpdateResult(Mem0Mapping, BaseModel):
    """An `update`: UPDATE wrote a new version `id` replacing `previous_id` (kept in history); NONE
    found the text already current (metadata, if given, replaced in place)."""

    message: str
    event: Literal["UPDATE", "NONE"]
    id: str
    previous_id: str
    memory: MemoryItem

    def mem0(self) -> dict[str, Any]:
        return {"message": self.message, "id": self.id}


class DeleteResult(Mem0Mapping, BaseModel):
    """A `delete` or `delete_all`: the memories deleted now (recall stops returning them; their history stays)."""

    message: str
    deleted: list[str]

    def mem0(self) -> dict[str, Any]:
        return {"message": self.message}
