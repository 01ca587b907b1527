"""JSON Lines export and import of journal events."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from ..errors import InvalidFact, JournalError
from ..validation import check_path
from .codec import EVENT_KINDS, Event, jsonl_line

__all__ = ["read_jsonl", "write_jsonl"]


def _file(path: object) -> str:
    """A file name (str, path or bytes); InvalidFact for anything else, None included."""
    name = check_path(path)
    if name is None:
        raise InvalidFact("path must be a file name or a path, got None")
    return name


def write_jsonl(path: str | os.PathLike[str], events: Iterable[Event]) -> int:
    """Write events (all but ``config``) as JSON Lines; returns the number of lines.
    JournalError when the file cannot be written."""
    path = _file(path)
    n = 0
    try:
        with open(path, "w", encoding="utf-8") as fh:
            for ev in events:
                if ev.kind != "config":
                    fh.write(jsonl_line(ev.kind, ev.recorded_at, ev.body))
                    n += 1
    except OSError as exc:
        msg = f"cannot write {os.fspath(path)!r}: {exc}"
        raise JournalError(msg) from None
    return n


def read_jsonl(path: str | os.PathLike[str]) -> list[tuple[int, str, dict[str, Any]]]:
    """(line number, kind, body) of every event line; InvalidFact naming the first bad line
    or an unreadable file."""
    path = _file(path)
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            lines = list(fh)
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read {os.fspath(path)!r} as UTF-8 JSON Lines: {exc}"
        raise InvalidFact(msg) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict) or not isinstance(obj.get("body"), dict):
                raise ValueError("not an object with a body")
            if obj.get("kind") not in EVENT_KINDS or obj["kind"] == "config":
                raise ValueError(f"unknown kind {obj.get('kind')!r}")
        except (ValueError, RecursionError) as exc:
            msg = f"{os.fspath(path)} line {n}: {exc}"
            raise InvalidFact(msg) from None
        out.append((n, obj["kind"], obj["body"]))
    return out
