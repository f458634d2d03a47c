"""Switchyard plugin SDK for Python 3 (standard library only).

Speaks the Switchyard protocol v1 (JSON-RPC 2.0, one JSON object per line) on stdin/stdout. The spec is
Protocol/README.md; this package is a convenience, not a requirement: any program that follows the spec works.
`switchyard.client` is the other side: a client of a running host's control socket. The API and an example are in
Protocol/sdk/python/README.md.

The modules, by concern: `declarations` (routes, contents, params), `coordinator` (the base class of a type),
`plugin` (a plugin process and its handshake), `ui` (screens as data, §21), `connection` (the protocol endpoint:
lines, ids, answers now or awaited), `reply` (the answer to a request the plugin sent), `errors` (codes and
RPCError). Everything public is importable from `switchyard` itself. `switchyard.testing` (`AppTest`) tests an
app's navigation over a real host.
"""
from .connection import MAX_TRACEBACK_CHARS, Connection, NotificationHandler, RequestHandler
from .coordinator import Coordinator, DeepLinkResolution, NavigateResult
from .declarations import (Content, Link, ParamDeclaration, Params, RouteDeclaration, RouteHelper, Step, child,
                           coordinator, full_screen, modal, push, root, screen, tab)
from .errors import (COMPOSITION_ERROR, CONFLICT, DEEP_LINK_INVALID, INSTANCE_NOT_FOUND, INTERNAL_ERROR,
                     INVALID_ANSWER, INVALID_PARAMS, INVALID_REQUEST, LIMIT_EXCEEDED, METHOD_NOT_FOUND, NOT_ALLOWED,
                     NOT_INITIALIZED, NOT_OWNER, PARSE_ERROR, PLUGIN_UNAVAILABLE, REJECTED_BY_GUARD, ROUTE_NOT_FOUND,
                     SHUTTING_DOWN, TIMEOUT, UNAUTHORIZED, UNSUPPORTED_PROTOCOL_VERSION, ErrorCode, RPCError, reject,
                     until_root, until_tab)
from ._async import MaybeAwaitable
from ._json import InvalidJSON
from .plugin import PROTOCOL_VERSIONS, Plugin
from .reply import Done, Reply
from . import ui

# The major version is the newest protocol version this SDK speaks (Protocol/CHANGES.md); minor and patch count the
# SDK's own releases within it. pyproject.toml carries the same number.
__version__ = "1.2.0"

__all__ = [
    "Plugin", "Coordinator", "Connection", "Reply", "RPCError", "ErrorCode", "InvalidJSON", "reject",
    "until_root", "until_tab",
    "root", "push", "modal", "full_screen", "tab", "child", "RouteHelper", "screen", "coordinator",
    "Params", "Content", "Step", "Link", "RouteDeclaration", "ParamDeclaration", "NavigateResult",
    "DeepLinkResolution", "MaybeAwaitable", "Done", "RequestHandler", "NotificationHandler",
    "PROTOCOL_VERSIONS", "MAX_TRACEBACK_CHARS", "__version__", "ui",
    "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR", "TIMEOUT",
    "NOT_INITIALIZED", "UNSUPPORTED_PROTOCOL_VERSION", "PLUGIN_UNAVAILABLE", "LIMIT_EXCEEDED", "SHUTTING_DOWN",
    "INVALID_ANSWER", "UNAUTHORIZED", "ROUTE_NOT_FOUND", "NOT_ALLOWED", "NOT_OWNER", "REJECTED_BY_GUARD",
    "DEEP_LINK_INVALID", "INSTANCE_NOT_FOUND", "CONFLICT", "COMPOSITION_ERROR",
]
