"""A client of a running Switchyard host's control socket (Protocol/README.md §15), standard library only.

What a UI shell, a test harness or a script uses to drive an app from outside: the same methods as the Swift
`SwitchyardClient`, one blocking call at a time, with the host's notifications kept until they are asked for.

    from switchyard.client import ControlClient, step

    with ControlClient(app="demo") as host:
        host.subscribe(snapshots=False)
        host.navigate([step("setRoot", "authenticated", params={"user": "alice"})])
        print(host.next_notification("tree/changed").params["revision"])

Every failure is a `ControlError`: `ResponseError` when the host answered with a typed error (`code`, `name`,
`message`, `data`), `ConnectionFailed`, `ProtocolViolation` or `Timeout` when there is no answer.
"""
from __future__ import annotations

import collections
import json
import os
import pwd
import socket
import struct
import time
from types import TracebackType
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Type

from . import patch
from ._json import InvalidJSON, encode_line
from .errors import ErrorCode

__all__ = [
    "ControlClient", "ControlError", "ResponseError", "ConnectionFailed", "ProtocolViolation", "Timeout",
    "InvalidRequest", "Notification", "default_socket_path", "step", "ERROR_NAMES", "ErrorCode", "apply_tree_change",
    "apply_patch",
]

#: Protocol/README.md §7: the name of every code (`-32014: "deepLinkInvalid"`).
ERROR_NAMES: Dict[int, str] = {int(code): code.wire_name for code in ErrorCode}

# The Swift client's bound: a snapshot of a big tree is large, but a line without end is a broken host.
MAX_LINE_BYTES = 64 << 20



class Notification(NamedTuple):
    """A notification from the host: `method` (e.g. tree/changed) and its `params` (a dict)."""

    method: str
    params: Dict[str, Any]

#: A deadline: (monotonic time or None, the timeout in seconds it came from).
_Deadline = Tuple[Optional[float], Optional[float]]


class ControlError(Exception):
    """Why a call did not produce a result. `message` is a sentence naming what failed."""

    message: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ResponseError(ControlError):
    """The host answered with a typed error: `code` (an ErrorCode such as DEEP_LINK_INVALID, equal to its integer
    -32014; a bare int for a code the spec does not define), `name` (deepLinkInvalid), `message`, `data`."""

    code: int
    name: str
    data: Any

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        self.code = ErrorCode.of(code)
        self.name = ERROR_NAMES.get(code, "error")
        self.data = data
        super().__init__(message)

    def __str__(self) -> str:
        return "%s (%d): %s" % (self.name, self.code, self.message)


class ConnectionFailed(ControlError):
    """The socket could not be reached, refused the server's owner, or broke."""


class ProtocolViolation(ControlError):
    """The host sent something that is not a valid message."""


class Timeout(ControlError):
    """No answer within the client's timeout."""


class InvalidRequest(ControlError):
    """The request was not sent: its params hold a value JSON cannot carry (NaN, ±Infinity, a set...), which the host
    would refuse as a whole line. `field` names it (`params.steps[0].params.score`)."""

    field: str

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def default_socket_path(app: str = "demo") -> str:
    """Where `switchyard run` listens for `app` when not told otherwise: `$XDG_RUNTIME_DIR/switchyard/APP.sock`
    when that variable names a folder, else `/tmp/switchyard-UID/APP.sock` (the host's own rule)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return "%s/switchyard/%s.sock" % (runtime, app)
    return "/tmp/switchyard-%d/%s.sock" % (os.getuid(), app)


def step(op: str, route: Optional[str] = None, *, tab: Optional[str] = None, params: Optional[Dict[str, Any]] = None,
         entry: Optional[int] = None, index: Optional[int] = None, count: Optional[int] = None,
         keep_stack: Optional[bool] = None) -> Dict[str, Any]:
    """One navigation step (Protocol/README.md §12.1), e.g. step("route", "todo", params={"id": "42"}),
    step("selectTab", tab="projects"), step("popLast")."""
    result: Dict[str, Any] = {"op": op}
    for key, value in (("route", route), ("tab", tab), ("params", params), ("entry", entry), ("index", index),
                       ("count", count), ("keepStack", keep_stack)):
        if value is not None:
            result[key] = value
    return result


def apply_tree_change(tree: Optional[Dict[str, Any]], change: Dict[str, Any]) -> Dict[str, Any]:
    """The tree after a tree/changed notification's params: its snapshot when it has one, else `tree` (the snapshot
    the watcher holds, not modified) with the patch applied. Raises ProtocolViolation when the patch is not for
    `tree`'s revision or does not apply."""
    try:
        return patch.apply_tree_change(tree, change)
    except patch.PatchError as error:
        raise ProtocolViolation(str(error)) from None


def apply_patch(document: Any, operations: List[Dict[str, Any]]) -> Any:
    """JSON Patch (RFC 6902): returns `document` with the operations applied; `document` itself is not modified
    (only the containers on each operation's path are copied). Raises ProtocolViolation naming the operation."""
    try:
        return patch.apply_patch(document, operations)
    except patch.PatchError as error:
        raise ProtocolViolation(str(error)) from None


def _describe_user(uid: int) -> str:
    try:
        return "uid %d (%s)" % (uid, pwd.getpwuid(uid).pw_name)
    except KeyError:
        return "uid %d" % uid


class ControlClient:
    """A connection to a host's control socket. Blocking; one request at a time (not thread-safe). A context manager:
    `with ControlClient(...) as host:` closes the connection at the end."""

    def __init__(self, path: Optional[str] = None, *, app: str = "demo", timeout: Optional[float] = 30.0,
                 require_same_user: bool = True) -> None:
        """Connects to the host at `path` (default: `default_socket_path(app)`). `timeout` bounds each call in
        seconds (None waits forever). With `require_same_user` (the default) a server that does not run as this
        process's effective uid, root's included, is refused (SO_PEERCRED): nobody can put an impostor at a path this
        client trusts."""
        self.path = path or default_socket_path(app)
        self.timeout = timeout
        self._next_id = 1
        self._buffer = bytearray()
        self._searched = 0
        self._notifications: collections.deque[Notification] = collections.deque()
        self._tree: Optional[Dict[str, Any]] = None  # the tree next_tree() patches
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.connect(self.path)
        except OSError as error:
            self._socket.close()
            hint = ""
            if isinstance(error, (FileNotFoundError, ConnectionRefusedError)):
                hint = " (is `switchyard run` running? pass another path or app to reach another host)"
            raise ConnectionFailed("cannot reach the host at %s: %s%s" % (self.path, error.strerror or error, hint))
        if require_same_user:
            self._check_peer()

    def _check_peer(self) -> None:
        own = os.geteuid()
        try:
            credentials = self._socket.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        except (AttributeError, OSError) as error:  # AttributeError: a platform without SO_PEERCRED
            self._socket.close()
            raise ConnectionFailed("cannot check who serves %s (SO_PEERCRED): %s; refusing to talk to it"
                                   % (self.path, error))
        pid, uid, _ = struct.unpack("3i", credentials)
        if uid != own:
            self._socket.close()
            raise ConnectionFailed(
                "the server at %s runs as %s (pid %d), not as this user (%s); refusing to talk to it"
                % (self.path, _describe_user(uid), pid, _describe_user(own)))

    def __enter__(self) -> "ControlClient":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        """Ends the connection (the host sees end of stream); later calls fail with ConnectionFailed."""
        self._socket.close()

    # -- the control methods (Protocol/README.md §15) ----------------------------------------------------------------
    def navigate(self, steps: List[Dict[str, Any]], instance: Optional[int] = None) -> Dict[str, Any]:
        """Applies a chain of steps atomically; `instance` defaults to the root. Returns {revision, instance}."""
        params: Dict[str, Any] = {"steps": steps}
        if instance is not None:
            params["instance"] = instance
        return self._object("navigate", params)

    def open(self, url: str, defer: Optional[bool] = None, defer_ms: Optional[int] = None) -> Dict[str, Any]:
        """Applies a deep link (validated first, then one atomic chain). Returns {revision, instance}.

        With `defer`, a link that cannot be applied yet (a guard defers it, or it needs a root that is not active)
        waits in the host, at most `defer_ms`, and is applied once it can be: the answer then has `deferred` (the
        waiting link), and `deepLink/changed` notifications tell what became of it (§13.5)."""
        params: Dict[str, Any] = {"url": url}
        if defer is not None:
            params["defer"] = defer
        if defer_ms is not None:
            params["deferMs"] = defer_ms
        return self._object("open", params)

    def cancel_deep_link(self, id: Optional[int] = None) -> Optional[Dict[str, Any]]:
        """Drops the deep link waiting (the one with `id`, or any); returns it, or None if none was waiting."""
        cancelled: Optional[Dict[str, Any]] = self._object("deepLink/cancel", {} if id is None else {"id": id})[
            "cancelled"]
        return cancelled

    def pending_deep_link(self) -> Optional[Dict[str, Any]]:
        """The deep link waiting now, or None."""
        pending: Optional[Dict[str, Any]] = self._object("deepLink/pending")["pending"]
        return pending

    def validate(self, url: str) -> Dict[str, Any]:
        """The dry run of open(): changes nothing. Returns {valid, steps?, error?}."""
        return self._object("validate", {"url": url})

    def tree(self) -> Dict[str, Any]:
        """The current snapshot (Protocol/schema/tree.json): {revision, root, instances}."""
        return self._object("tree/get")

    def render(self, format: str = "text") -> Dict[str, Any]:
        """The tree as text, json, dot or mermaid. Returns {revision, text}."""
        return self._object("tree/render", {"format": format})

    def query(self, query: str, instance: Optional[int] = None, route: Optional[str] = None,
              params: Optional[Dict[str, Any]] = None) -> Any:
        """A read-only question (§12.4: isRoot, hasRoot, currentRoute, isInStack, topCoordinator); returns its
        answer (the `result` member)."""
        request: Dict[str, Any] = {"query": query}
        for key, value in (("instance", instance), ("route", route), ("params", params)):
            if value is not None:
                request[key] = value
        return self._object("tree/query", request)["result"]

    def subscribe(self, snapshots: bool = True, deltas: bool = False) -> Dict[str, Any]:
        """Asks for tree/changed (with the snapshot unless `snapshots` is False), plugin/changed and
        coordinator/destroyed notifications. Returns the current snapshot, so nothing is missed in between.

        With `deltas`, each tree/changed carries a JSON Patch against the previous snapshot (`base`, `patch`) instead
        of the whole tree (or the whole tree when this client could not have the base): `next_tree` applies them."""
        params: Dict[str, Any] = {"snapshots": snapshots}
        if deltas:
            params["deltas"] = True
        tree: Dict[str, Any] = self.call("tree/subscribe", params)
        self._tree = tree
        return tree

    def next_tree(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Waits for the next tree/changed and returns the tree it leads to (its snapshot, or the tree this client
        holds with the patch applied), skipping other notifications. Needs `subscribe()` with snapshots or deltas."""
        notification = self.next_notification("tree/changed", timeout)
        tree = apply_tree_change(self._tree, notification.params)
        self._tree = tree
        return tree

    def unsubscribe(self) -> Dict[str, Any]:
        """Stops the notifications."""
        return self._object("tree/unsubscribe")

    def dismissed(self, instance: int, entry: int) -> Dict[str, Any]:
        """Reports that the user dismissed `entry` of `instance` in the UI. Returns {revision, instance}."""
        return self._object("user/dismissed", {"instance": instance, "entry": entry})

    def status(self) -> Dict[str, Any]:
        """Each plugin's state: {revision, plugins: [{name, state, pid?, version?, restarts, error?, ...}],
        composition, host}."""
        return self._object("host/status")

    def start_plugin(self, plugin: str) -> Dict[str, Any]:
        """Starts a failed or stopped plugin again (plugin/start, once whatever made it fail is fixed). Returns its
        status once it serves, its instances restored and its placeholders created; raises what it failed with."""
        return self._object("plugin/start", {"plugin": plugin})

    def shutdown(self) -> Dict[str, Any]:
        """Stops the host and its plugins."""
        return self._object("host/shutdown")

    def ping(self) -> Dict[str, Any]:
        """`$/ping`: answered at once with {} by a live host."""
        return self._object("$/ping")

    def _object(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result: Dict[str, Any] = self.call(method, params)
        return result

    # -- notifications ----------------------------------------------------------------------------------------------
    def next_notification(self, method: Optional[str] = None, timeout: Optional[float] = None) -> Notification:
        """The next notification (of `method`, skipping others, when given), waiting up to `timeout` seconds (default:
        the client's; float("inf") waits forever). Notifications that arrived while a call waited for its answer
        come first."""
        deadline = self._deadline(timeout)
        while True:
            while self._notifications:
                notification = self._notifications.popleft()
                if method is None or notification.method == method:
                    return notification
            self._read_message(deadline)

    def notifications(self) -> Iterator[Notification]:
        """Every notification, as they come, until the connection ends (then ConnectionFailed)."""
        while True:
            yield self.next_notification(timeout=float("inf"))

    # -- the envelope -----------------------------------------------------------------------------------------------
    def call(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """Sends a request and returns its result; raises ResponseError with the host's typed error, InvalidRequest
        (nothing sent) when `params` hold a value JSON cannot carry."""
        request_id = self._next_id
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        deadline = self._deadline(None)
        while True:
            message = self._read_message(deadline)
            if message is None or "method" in message:
                continue
            answered = message.get("id")
            # An error without id is the host's refusal of the whole connection (-32007 unauthorized) or its answer
            # to a line it could not read: one request at a time, so it is this one's.
            if answered != request_id and not (answered is None and "error" in message):
                continue  # a late answer to a call that timed out
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                raise ResponseError(error.get("code", -32603), error.get("message", "no message"), error.get("data"))
            return message.get("result")

    def _deadline(self, timeout: Optional[float]) -> _Deadline:
        """(monotonic deadline or None, the timeout it came from) for a wait of `timeout` seconds."""
        timeout = self.timeout if timeout is None else timeout
        if timeout is None or timeout == float("inf"):
            return None, None
        return time.monotonic() + timeout, timeout

    def _send(self, message: Dict[str, Any]) -> None:
        try:
            data = encode_line(message)
        except InvalidJSON as error:
            raise InvalidRequest("%s was not sent: %s" % (message.get("method"), error), error.field) from None
        try:
            self._socket.sendall(data)
        except OSError as error:
            raise ConnectionFailed("cannot write to %s: %s" % (self.path, error.strerror or error))

    def _read_line(self, deadline: _Deadline) -> bytes:
        """The next line, without its terminator; only the bytes received since the last look are searched."""
        when, timeout = deadline
        while True:
            newline = self._buffer.find(b"\n", self._searched)
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[:newline + 1]
                self._searched = 0
                return line
            self._searched = len(self._buffer)
            if self._searched > MAX_LINE_BYTES:
                raise ProtocolViolation("the host sent a line longer than %d bytes" % MAX_LINE_BYTES)
            remaining = None if when is None else when - time.monotonic()
            try:
                if remaining is not None and remaining <= 0:
                    raise socket.timeout
                self._socket.settimeout(remaining)
                chunk = self._socket.recv(1 << 16)
            except socket.timeout:
                raise Timeout("no answer from the host at %s within %s s" % (self.path, timeout)) from None
            except OSError as error:
                raise ConnectionFailed("cannot read from %s: %s" % (self.path, error.strerror or error))
            if not chunk:
                raise ConnectionFailed("the host at %s closed the connection" % self.path)
            self._buffer += chunk

    def _read_message(self, deadline: _Deadline) -> Optional[Dict[str, Any]]:
        """Reads one message; keeps a notification for next_notification() and returns None for it."""
        line = self._read_line(deadline)
        if not line.strip():
            return None
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError as error:
            raise ProtocolViolation("the host sent an invalid message: %s" % error)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise ProtocolViolation("the host sent an invalid message: %s" % line[:200].decode("utf-8", "replace"))
        if "method" in message and "id" not in message:
            self._notifications.append(Notification(message["method"], message.get("params") or {}))
            return None
        return message
