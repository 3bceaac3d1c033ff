"""Time in one convention: naive UTC datetimes (DuckDB TIMESTAMP), ISO 8601 on the way in and out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, PlainSerializer


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def naive_utc(value: datetime) -> datetime:
    """An aware time in the store's convention (naive UTC); a naive one is taken as UTC already."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def aware_utc(value: datetime) -> datetime:
    """A time in the store's convention as an aware UTC time: what leaves the process says its zone."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def iso_utc(value: datetime) -> str:
    """ISO 8601 with its offset (RFC 3339), the form a JSON `date-time` must have."""
    return aware_utc(value).isoformat()


# A time field of a model users see: naive UTC inside the process (whatever a client sent), and on the
# way out as JSON with its offset, so the OpenAPI `date-time` it declares is what it sends.
UtcDatetime = Annotated[datetime, AfterValidator(naive_utc),
                        PlainSerializer(aware_utc, return_type=datetime, when_used="json")]


def parse_timestamp(value: str) -> datetime:
    """ISO 8601 (a trailing Z allowed) to naive UTC; offset-less values are taken as already UTC."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def clock(seconds: float) -> str:
    """A position in a recording as people write it: 04:05, or 1:02:05 past the hour."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
