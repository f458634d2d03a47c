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
import collections
import json
import os
import pwd
import socket
import struct
import time

__all__ = [
    "ControlClient", "ControlError", "ResponseError", "ConnectionFailed", "ProtocolViolation", "Timeout",
    "Notification", "default_socket_path", "step", "ERROR_NAMES", "apply_tree_change", "apply_patch",
]

# Protocol/README.md §7.
ERROR_NAMES = {
    -32700: "parseError", -32600: "invalidRequest", -32601: "methodNotFound", -32602: "invalidParams",
    -32603: "internalError", -32000: "timeout", -32001: "notInitialized", -32002: "unsupportedProtocolVersion",
    -32003: "pluginUnavailable", -32004: "limitExceeded", -32005: "shuttingDown", -32006: "invalidAnswer",
    -32007: "unauthorized", -32010: "routeNotFound", -32011: "notAllowed", -32012: "notOwner",
    -32013: "rejectedByGuard", -32014: "deepLinkInvalid", -32015: "instanceNotFound", -32016: "conflict",
    -32017: "compositionError",
}

# The Swift client's bound: a snapshot of a big tree is large, but a line without end is a broken host.
MAX_LINE_BYTES = 64 << 20

Notification = collections.namedtuple("Notification", "method params")
Notification.__doc__ = "A notification from the host: `method` (e.g. tree/changed) and its `params` (a dict)."


class ControlError(Exception):
    """Why a call did not produce a result. `message` is a sentence naming what failed."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class ResponseError(ControlError):
    """The host answered with a typed error: `code` (e.g. -32014), `name` (deepLinkInvalid), `message`, `data`."""

    def __init__(self, code, message, data=None):
        self.code = code
        self.name = ERROR_NAMES.get(code, "error")
        self.data = data
        super().__init__(message)

    def __str__(self):
        return "%s (%d): %s" % (self.name, self.code, self.message)


class ConnectionFailed(ControlError):
    """The socket could not be reached, refused the server's owner, or broke."""


class ProtocolViolation(ControlError):
    """The host sent something that is not a valid message."""


class Timeout(ControlError):
    """No answer within the client's timeout."""


def default_socket_path(app="demo"):
    """Where `switchyard run` listens for `app` when not told otherwise: `$XDG_RUNTIME_DIR/switchyard/APP.sock`
    when that variable names a folder, else `/tmp/switchyard-UID/APP.sock` (the host's own rule)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return "%s/switchyard/%s.sock" % (runtime, app)
    return "/tmp/switchyard-%d/%s.sock" % (os.getuid(), app)


def step(op, route=None, *, tab=None, params=None, entry=None, index=None, count=None, keep_stack=None):
    """One navigation step (Protocol/README.md §12.1), e.g. step("route", "todo", params={"id": "42"}),
    step("selectTab", tab="projects"), step("popLast")."""
    result = {"op": op}
    for key, value in (("route", route), ("tab", tab), ("params", params), ("entry", entry), ("index", index),
                       ("count", count), ("keepStack", keep_stack)):
        if value is not None:
            result[key] = value
    return result


def apply_tree_change(tree, change):
    """The tree after a tree/changed notification's params: its snapshot when it has one, else `tree` (the snapshot
    the watcher holds, not modified) with the patch applied. Raises ProtocolViolation when the patch is not for
    `tree`'s revision or does not apply."""
    if change.get("snapshot") is not None:
        return change["snapshot"]
    if "patch" not in change:
        raise ProtocolViolation("tree/changed of revision %s has neither a snapshot nor a patch" % change.get("revision"))
    if tree is None or change.get("base") != tree.get("revision"):
        raise ProtocolViolation("tree/changed patches revision %s, but the tree held is revision %s"
                                % (change.get("base"), None if tree is None else tree.get("revision")))
    return apply_patch(tree, change["patch"])


def apply_patch(document, patch):
    """JSON Patch (RFC 6902): returns `document` with the operations applied; `document` itself is not modified
    (only the containers on each operation's path are copied)."""
    for index, operation in enumerate(patch):
        try:
            document = _apply_operation(document, operation)
        except (KeyError, IndexError, ValueError, TypeError) as error:
            raise ProtocolViolation("patch operation %d (%s %s) does not apply: %s"
                                    % (index, operation.get("op"), operation.get("path"), error)) from None
    return document


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError("%r is not a JSON pointer" % path)
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def _index(token, length):
    """An array index as RFC 6901 writes it (digits, no leading zero), below `length`: Python's negative indices and
    int()'s leniency ("-1", "+1", " 1") are not JSON Pointer, and "-1" would reach the last element."""
    if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
        raise IndexError("'%s' is not an array index" % token)
    if int(token) >= length:
        raise IndexError("index %s is out of range" % token)
    return int(token)


def _get(document, tokens):
    for token in tokens:
        document = document[_index(token, len(document))] if isinstance(document, list) else document[token]
    return document


def _edit(document, tokens, change):
    """A copy of `document` where the container holding the last token is `change(copy_of_container, token)`."""
    if not tokens:
        raise ValueError("the whole document cannot be edited in place")
    copy = list(document) if isinstance(document, list) else dict(document)
    token = tokens[0]
    if len(tokens) == 1:
        change(copy, token)
    else:
        key = _index(token, len(copy)) if isinstance(copy, list) else token
        copy[key] = _edit(copy[key], tokens[1:], change)
    return copy


def _add(container, token, value):
    if isinstance(container, list):
        position = len(container) if token == "-" else _index(token, len(container) + 1)
        container.insert(position, value)
    else:
        container[token] = value


def _remove(container, token):
    if isinstance(container, list):
        del container[_index(token, len(container))]
    else:
        del container[token]


def _apply_operation(document, operation):
    op, tokens = operation["op"], _pointer(operation["path"])
    if op == "add":
        return _edit(document, tokens, lambda c, t: _add(c, t, operation["value"]))
    if op == "remove":
        return _edit(document, tokens, _remove)
    if op == "replace":
        def replace(container, token):
            _remove(container, token)
            _add(container, token, operation["value"])
        return _edit(document, tokens, replace)
    if op in ("move", "copy"):
        source = _pointer(operation["from"])
        value = _get(document, source)
        if op == "move":
            document = _edit(document, source, _remove)
        return _edit(document, tokens, lambda c, t: _add(c, t, value))
    if op == "test":
        if _get(document, tokens) != operation.get("value"):
            raise ValueError("test failed")
        return document
    raise ValueError("unknown op %r" % op)


def _describe_user(uid):
    try:
        return "uid %d (%s)" % (uid, pwd.getpwuid(uid).pw_name)
    except KeyError:
        return "uid %d" % uid


class ControlClient:
    """A connection to a host's control socket. Blocking; one request at a time (not thread-safe). A context manager:
    `with ControlClient(...) as host:` closes the connection at the end."""

    def __init__(self, path=None, *, app="demo", timeout=30.0, require_same_user=True):
        """Connects to the host at `path` (default: `default_socket_path(app)`). `timeout` bounds each call in
        seconds (None waits forever). With `require_same_user` (the default) a server that does not run as this
        process's effective uid, root's included, is refused (SO_PEERCRED): nobody can put an impostor at a path this
        client trusts."""
        self.path = path or default_socket_path(app)
        self.timeout = timeout
        self._next_id = 1
        self._buffer = bytearray()
        self._searched = 0
        self._notifications = collections.deque()
        self._tree = None  # the tree next_tree() patches
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

    def _check_peer(self):
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

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    def close(self):
        """Ends the connection (the host sees end of stream); later calls fail with ConnectionFailed."""
        self._socket.close()

    # -- the control methods (Protocol/README.md §15) ----------------------------------------------------------------
    def navigate(self, steps, instance=None):
        """Applies a chain of steps atomically; `instance` defaults to the root. Returns {revision, instance}."""
        params = {"steps": steps}
        if instance is not None:
            params["instance"] = instance
        return self.call("navigate", params)

    def open(self, url):
        """Applies a deep link (validated first, then one atomic chain). Returns {revision, instance}."""
        return self.call("open", {"url": url})

    def validate(self, url):
        """The dry run of open(): changes nothing. Returns {valid, steps?, error?}."""
        return self.call("validate", {"url": url})

    def tree(self):
        """The current snapshot (Protocol/schema/tree.json): {revision, root, instances}."""
        return self.call("tree/get")

    def render(self, format="text"):
        """The tree as text, json, dot or mermaid. Returns {revision, text}."""
        return self.call("tree/render", {"format": format})

    def query(self, query, instance=None, route=None, params=None):
        """A read-only question (§12.4: isRoot, hasRoot, currentRoute, isInStack, topCoordinator); returns its
        answer (the `result` member)."""
        request = {"query": query}
        for key, value in (("instance", instance), ("route", route), ("params", params)):
            if value is not None:
                request[key] = value
        return self.call("tree/query", request)["result"]

    def subscribe(self, snapshots=True, deltas=False):
        """Asks for tree/changed (with the snapshot unless `snapshots` is False), plugin/changed and
        coordinator/destroyed notifications. Returns the current snapshot, so nothing is missed in between.

        With `deltas`, each tree/changed carries a JSON Patch against the previous snapshot (`base`, `patch`) instead
        of the whole tree (or the whole tree when this client could not have the base): `next_tree` applies them."""
        params = {"snapshots": snapshots}
        if deltas:
            params["deltas"] = True
        self._tree = self.call("tree/subscribe", params)
        return self._tree

    def next_tree(self, timeout=None):
        """Waits for the next tree/changed and returns the tree it leads to (its snapshot, or the tree this client
        holds with the patch applied), skipping other notifications. Needs `subscribe()` with snapshots or deltas."""
        notification = self.next_notification("tree/changed", timeout)
        self._tree = apply_tree_change(self._tree, notification.params)
        return self._tree

    def unsubscribe(self):
        """Stops the notifications."""
        return self.call("tree/unsubscribe")

    def dismissed(self, instance, entry):
        """Reports that the user dismissed `entry` of `instance` in the UI. Returns {revision, instance}."""
        return self.call("user/dismissed", {"instance": instance, "entry": entry})

    def status(self):
        """Each plugin's state: {revision, plugins: [{name, state, pid?, version?, restarts, error?, ...}],
        composition, host}."""
        return self.call("host/status")

    def start_plugin(self, plugin):
        """Starts a failed or stopped plugin again (plugin/start, once whatever made it fail is fixed). Returns its
        status once it serves, its instances restored and its placeholders created; raises what it failed with."""
        return self.call("plugin/start", {"plugin": plugin})

    def shutdown(self):
        """Stops the host and its plugins."""
        return self.call("host/shutdown")

    def ping(self):
        return self.call("$/ping")

    # -- notifications ----------------------------------------------------------------------------------------------
    def next_notification(self, method=None, timeout=None):
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

    def notifications(self):
        """Every notification, as they come, until the connection ends (then ConnectionFailed)."""
        while True:
            yield self.next_notification(timeout=float("inf"))

    # -- the envelope -----------------------------------------------------------------------------------------------
    def call(self, method, params=None):
        """Sends a request and returns its result; raises ResponseError with the host's typed error."""
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

    def _deadline(self, timeout):
        """(monotonic deadline or None, the timeout it came from) for a wait of `timeout` seconds."""
        timeout = self.timeout if timeout is None else timeout
        if timeout is None or timeout == float("inf"):
            return None, None
        return time.monotonic() + timeout, timeout

    def _send(self, message):
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        try:
            self._socket.sendall(data)
        except OSError as error:
            raise ConnectionFailed("cannot write to %s: %s" % (self.path, error.strerror or error))

    def _read_line(self, deadline):
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

    def _read_message(self, deadline):
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
