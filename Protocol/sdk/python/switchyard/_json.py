"""Strict JSON lines (Protocol/README.md §1): what the SDK and the control client write.

Python's `json.dumps` writes `NaN` and `Infinity` by default, which RFC 8259 (and so the host's parser) rejects: the
whole line would be refused as a parse error, far from the code that produced it. Here such a value is an
`InvalidJSON` naming its place in the message, raised before anything is written."""
from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["InvalidJSON", "encode_line"]


class InvalidJSON(ValueError):
    """A message holds a value JSON cannot carry: NaN or ±Infinity, an unpaired surrogate, or an object `json` cannot
    write (a set, a class instance...). `field` is its path in the message (`result.content.screen.props.score`)."""

    field: str
    problem: str

    def __init__(self, field: str, problem: str) -> None:
        super().__init__("%s is %s, which JSON cannot carry (RFC 8259)" % (field or "the message", problem))
        self.field = field
        self.problem = problem


def encode_line(message: dict[str, Any]) -> bytes:
    """`message` as one protocol line: compact UTF-8 JSON and its `\\n`. Raises InvalidJSON."""
    try:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return (text + "\n").encode("utf-8")
    except (ValueError, TypeError, RecursionError) as error:
        located = _locate(message, "", set())
        raise (InvalidJSON(*located) if located else InvalidJSON("", str(error))) from None


def _locate(value: Any, path: str, seen: set[int]) -> tuple[str, str] | None:
    """The path and a description of the first value in `value` that JSON cannot carry, or None."""
    if value is None or isinstance(value, (bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, repr(value).replace("nan", "NaN").replace("inf", "Infinity"))
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return (path, "a string with an unpaired surrogate")
        return None
    if id(value) in seen:
        return (path, "a reference to a container that holds it")
    if isinstance(value, dict):
        seen.add(id(value))
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                return (path, "an object with a %s key" % type(key).__name__)
            found = _locate(item, "%s.%s" % (path, key) if path else str(key), seen)
            if found:
                return found
        seen.discard(id(value))
        return None
    if isinstance(value, (list, tuple)):
        seen.add(id(value))
        for index, item in enumerate(value):
            found = _locate(item, "%s[%d]" % (path, index), seen)
            if found:
                return found
        seen.discard(id(value))
        return None
    return (path, "a %s" % type(value).__name__)
