"""Error codes (Protocol/README.md §7) and the exception a handler raises to answer with one."""
from __future__ import annotations

from enum import IntEnum
from typing import Any, Dict, List, Optional, Sequence

__all__ = [
    "ErrorCode", "RPCError", "reject", "until_root", "until_tab",
    "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR", "TIMEOUT",
    "NOT_INITIALIZED", "UNSUPPORTED_PROTOCOL_VERSION", "PLUGIN_UNAVAILABLE", "LIMIT_EXCEEDED", "SHUTTING_DOWN",
    "INVALID_ANSWER", "UNAUTHORIZED", "ROUTE_NOT_FOUND", "NOT_ALLOWED", "NOT_OWNER", "REJECTED_BY_GUARD",
    "DEEP_LINK_INVALID", "INSTANCE_NOT_FOUND", "CONFLICT", "COMPOSITION_ERROR",
]


class ErrorCode(IntEnum):
    """Every JSON-RPC and Switchyard error code of the spec's table (§7).

    An `IntEnum`, so a member is the integer on the wire: `ErrorCode.REJECTED_BY_GUARD == -32013`, it serialises as
    `-32013`, and code written against the bare integers keeps working."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    TIMEOUT = -32000
    NOT_INITIALIZED = -32001
    UNSUPPORTED_PROTOCOL_VERSION = -32002
    PLUGIN_UNAVAILABLE = -32003
    LIMIT_EXCEEDED = -32004
    SHUTTING_DOWN = -32005
    INVALID_ANSWER = -32006
    UNAUTHORIZED = -32007
    ROUTE_NOT_FOUND = -32010
    NOT_ALLOWED = -32011
    NOT_OWNER = -32012
    REJECTED_BY_GUARD = -32013
    DEEP_LINK_INVALID = -32014
    INSTANCE_NOT_FOUND = -32015
    CONFLICT = -32016
    COMPOSITION_ERROR = -32017

    @property
    def wire_name(self) -> str:
        """The spec's name of the code, as the host and the CLI print it: `rejectedByGuard`."""
        first, *rest = self.name.lower().split("_")
        return first + "".join(word.capitalize() for word in rest)

    @classmethod
    def of(cls, code: int) -> int:
        """`code` as a member when the spec defines it, else the integer itself (a plugin may send its own codes)."""
        try:
            return cls(code)
        except ValueError:
            return code


# The codes as module constants, the SDK's first spelling (`switchyard.REJECTED_BY_GUARD`): members of ErrorCode.
PARSE_ERROR = ErrorCode.PARSE_ERROR
INVALID_REQUEST = ErrorCode.INVALID_REQUEST
METHOD_NOT_FOUND = ErrorCode.METHOD_NOT_FOUND
INVALID_PARAMS = ErrorCode.INVALID_PARAMS
INTERNAL_ERROR = ErrorCode.INTERNAL_ERROR
TIMEOUT = ErrorCode.TIMEOUT
NOT_INITIALIZED = ErrorCode.NOT_INITIALIZED
UNSUPPORTED_PROTOCOL_VERSION = ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
PLUGIN_UNAVAILABLE = ErrorCode.PLUGIN_UNAVAILABLE
LIMIT_EXCEEDED = ErrorCode.LIMIT_EXCEEDED
SHUTTING_DOWN = ErrorCode.SHUTTING_DOWN
INVALID_ANSWER = ErrorCode.INVALID_ANSWER
UNAUTHORIZED = ErrorCode.UNAUTHORIZED
ROUTE_NOT_FOUND = ErrorCode.ROUTE_NOT_FOUND
NOT_ALLOWED = ErrorCode.NOT_ALLOWED
NOT_OWNER = ErrorCode.NOT_OWNER
REJECTED_BY_GUARD = ErrorCode.REJECTED_BY_GUARD
DEEP_LINK_INVALID = ErrorCode.DEEP_LINK_INVALID
INSTANCE_NOT_FOUND = ErrorCode.INSTANCE_NOT_FOUND
CONFLICT = ErrorCode.CONFLICT
COMPOSITION_ERROR = ErrorCode.COMPOSITION_ERROR


class RPCError(Exception):
    """A typed error: raise it from a handler to answer with `code`, `message` and `data` (§7), and what awaiting a
    request the plugin sent raises when the host refuses it.

    `code` is an `ErrorCode` when the spec defines it (an `int` either way)."""

    code: int
    message: str
    data: Any

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = ErrorCode.of(code)
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        """The `error` member of an answer: `{code, message, data?}`."""
        body: dict[str, Any] = {"code": int(self.code), "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return body


def reject(reason: str, data: Any = None, *, defer_until: Optional[Dict[str, Any]] = None,
           redirect: Optional[Sequence[Dict[str, Any]]] = None) -> RPCError:
    """A guard's refusal, to raise from a route method: the route is not taken, the whole request fails with
    `-32013 rejectedByGuard` and the tree stays as it was (§8, `coordinator/route`).

    With `defer_until` it is a "not yet" (§13.5): a deep link opened with `defer` waits until the condition holds
    (`until_root(...)`, `until_tab(...)`), then is applied; `redirect` is what to show meanwhile (a sign-in), steps
    the host applies once from this coordinator, as `navigate` would (`[{"op": "popToRoot"}]`). A deep link that
    may not wait, and any other request, fails as with a plain refusal."""
    if defer_until is None:
        if redirect is not None:
            raise ValueError("reject(redirect=...) needs defer_until: a redirect is what to show while a link waits")
        return RPCError(REJECTED_BY_GUARD, reason, data)
    if data is not None and not isinstance(data, dict):
        raise ValueError("reject(defer_until=...) sends its deferral in data.defer, so data must be a dict")
    deferral: Dict[str, Any] = {"until": dict(defer_until)}
    if redirect is not None:
        deferral["redirect"] = [dict(step) for step in redirect]
    return RPCError(REJECTED_BY_GUARD, reason, dict(data or {}, **{"defer": deferral}))


def _condition(kind: str, route: str, instance: Optional[int], plugin: Optional[str],
               type: Optional[str]) -> Dict[str, Any]:
    condition: Dict[str, Any] = {kind: route}
    for key, value in (("instance", instance), ("plugin", plugin), ("type", type)):
        if value is not None:
            condition[key] = value
    return condition


def until_root(route: str, *, instance: Optional[int] = None, plugin: Optional[str] = None,
               type: Optional[str] = None) -> Dict[str, Any]:
    """A deferral's condition (§13.5): `route` is the active root of a stack coordinator: `instance`, else any
    instance of `plugin`.`type` (the plugin defaults to this one), else the coordinator whose route was refused."""
    return _condition("root", route, instance, plugin, type)


def until_tab(route: str, *, instance: Optional[int] = None, plugin: Optional[str] = None,
              type: Optional[str] = None) -> Dict[str, Any]:
    """A deferral's condition (§13.5): a tabs coordinator shows the tab `route` (chosen as for `until_root`)."""
    return _condition("tab", route, instance, plugin, type)
