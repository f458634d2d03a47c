"""Switchyard plugin SDK for Python 3 (standard library only).

Speaks the Switchyard protocol v1 (JSON-RPC 2.0, one JSON object per line) on stdin/stdout. The spec is
Protocol/README.md; this module is a convenience, not a requirement: any program that follows the spec works.

stdout belongs to the protocol: `Plugin.run()` writes messages to fd 1 itself and points `sys.stdout` at stderr, so a
stray print() lands in the host log instead of corrupting the stream.
"""
import json
import os
import sys

PROTOCOL_VERSIONS = [1]

# JSON-RPC and Switchyard error codes (Protocol/README.md, "Error codes").
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32002
ROUTE_NOT_FOUND = -32010
NOT_ALLOWED = -32011
REJECTED_BY_GUARD = -32013
DEEP_LINK_INVALID = -32014


class RPCError(Exception):
    """Raise from a handler to answer with a typed error."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def reject(reason):
    """A guard's refusal: the route is not taken and the tree stays as it was."""
    return RPCError(REJECTED_BY_GUARD, reason)


class Plugin:
    def __init__(self, name, version, coordinators):
        self.name = name
        self.version = version
        self.coordinators = coordinators
        self.handlers = {}
        self.notification_handlers = {}
        self.plugin_name = None
        self._next_id = 1
        self._pending = {}
        self._shutdown = False
        self._out = None

    # -- registration -------------------------------------------------------------------------------------------
    def request(self, method):
        """Decorator: handle a host request. The handler gets the params dict and returns the result."""
        def register(function):
            self.handlers[method] = function
            return function
        return register

    def notification(self, method):
        def register(function):
            self.notification_handlers[method] = function
            return function
        return register

    # -- talking to the host -------------------------------------------------------------------------------------
    def send(self, message):
        message["jsonrpc"] = "2.0"
        self._out.write(json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n")
        self._out.flush()

    def call(self, method, params=None):
        """Sends a request to the host and returns the id; the answer arrives through on_response."""
        request_id = self._next_id
        self._next_id += 1
        self.send({"id": request_id, "method": method, "params": params or {}})
        return request_id

    def log(self, level, message):
        self.send({"method": "log", "params": {"level": level, "message": message}})

    # -- running --------------------------------------------------------------------------------------------------
    def _initialize(self, params):
        offered = params.get("protocolVersions", [])
        common = [v for v in PROTOCOL_VERSIONS if v in offered]
        if not common:
            raise RPCError(UNSUPPORTED_PROTOCOL_VERSION,
                           "this plugin speaks %s, the host offers %s" % (PROTOCOL_VERSIONS, offered),
                           {"supported": PROTOCOL_VERSIONS})
        self.plugin_name = params.get("pluginName")
        return {"protocolVersion": max(common), "plugin": {"name": self.name, "version": self.version},
                "coordinators": self.coordinators}

    def _dispatch(self, message):
        method = message.get("method")
        if method is None:
            request_id = message.get("id")
            callback = self._pending.pop(request_id, None)
            if callback:
                callback(message.get("result"), message.get("error"))
            return
        params = message.get("params") or {}
        if "id" not in message:
            if method == "exit":
                sys.exit(0 if self._shutdown else 1)
            handler = self.notification_handlers.get(method)
            if handler:
                handler(params)
            return
        request_id = message["id"]
        try:
            if method == "$/ping":
                result = {}
            elif method == "initialize":
                result = self._initialize(params)
            elif method == "shutdown":
                self._shutdown = True
                result = {}
            elif method in self.handlers:
                result = self.handlers[method](params)
            else:
                raise RPCError(METHOD_NOT_FOUND, "unknown method '%s'" % method, {"method": method})
            self.send({"id": request_id, "result": result if result is not None else {}})
        except RPCError as error:
            body = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            self.send({"id": request_id, "error": body})
        except Exception as error:  # a bug in a handler must not kill the plugin
            self.send({"id": request_id, "error": {"code": INTERNAL_ERROR, "message": "%s: %s" % (type(error).__name__, error)}})

    def run(self):
        # fd 1 carries the protocol only; print() and anything else using sys.stdout goes to stderr. No extra
        # descriptor is opened, so the plugin holds exactly 0, 1 and 2.
        self._out = open(1, "w", encoding="utf-8", buffering=1, closefd=False)
        sys.stdout = sys.stderr
        for line in sys.stdin.buffer:
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError as error:
                sys.stderr.write("switchyard: ignoring a line that is not JSON: %s\n" % error)
                continue
            if isinstance(message, dict):
                self._dispatch(message)
        # stdin reached EOF: the host closed it or died. The contract is to exit.
        sys.exit(0)


def screen(name, **props):
    return {"screen": {"name": name, "props": props}}


def coordinator(type_name, plugin=None, params=None):
    reference = {"type": type_name}
    if plugin:
        reference["plugin"] = plugin
    if params is not None:
        reference["params"] = params
    return {"coordinator": reference}
