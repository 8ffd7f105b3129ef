"""The one input type every layer takes: a verbatim event, reduced to what the layers read.

Layers are pure functions over data (the Cortex rule: core logic never does I/O), so they do not
import the storage models. The caller converts its rows with `LayerEvent.of(row)`, which reads
either attributes or mapping keys named as in the events table (`id`, `speaker`, `content`,
`occurred_at`, `conversation_id`, `recipient`).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence


@dataclass(frozen=True)
class LayerEvent:
    id: str
    speaker: str
    content: str
    occurred_at: datetime
    conversation_id: str = ""
    recipient: str | None = None
    seq: int = 0  # tie-break for events that share a timestamp (LoCoMo turns share their session's)

    @classmethod
    def of(cls, row: Any, seq: int = 0) -> "LayerEvent":
        """Build from an ORM row, a dataclass or a dict with the events table's column names."""

        def get(name: str, default: Any = None) -> Any:
            if isinstance(row, dict):
                return row.get(name, default)
            return getattr(row, name, default)

        occurred = get("occurred_at")
        if isinstance(occurred, str):
            occurred = datetime.fromisoformat(occurred.replace("Z", "+00:00"))
        if occurred is None:
            raise ValueError("event has no occurred_at")
        return cls(
            id=str(get("id")),
            speaker=str(get("speaker") or ""),
            content=str(get("content") or ""),
            occurred_at=as_utc(occurred),
            conversation_id=str(get("conversation_id") or ""),
            recipient=get("recipient"),
            seq=int(get("seq", seq) or seq),
        )


def as_utc(ts: datetime) -> datetime:
    """Naive timestamps are taken as UTC (the events table stores UTC)."""
    return ts.replace(tzinfo=timezone.utc) if ts.tzinfo is None else ts.astimezone(timezone.utc)


def in_time_order(events: Iterable[LayerEvent]) -> list[LayerEvent]:
    """Time order, then arrival order: the order every layer assumes."""
    return sorted(events, key=lambda e: (e.occurred_at, e.seq))


def by_conversation(events: Sequence[LayerEvent]) -> dict[str, list[LayerEvent]]:
    out: dict[str, list[LayerEvent]] = {}
    for e in events:
        out.setdefault(e.conversation_id, []).append(e)
    return {k: in_time_order(v) for k, v in out.items()}


def jsonable(obj: Any) -> Any:
    """Any layer output (dataclasses, datetimes, enums, tuples, numpy values) as plain JSON data,
    for jsonb columns and API responses."""
    import dataclasses
    from enum import Enum

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, dict):
        return {str(k) if not isinstance(k, tuple) else "|".join(map(str, k)): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return obj.item()
    if hasattr(obj, "tolist"):  # numpy array
        return obj.tolist()
    return obj
