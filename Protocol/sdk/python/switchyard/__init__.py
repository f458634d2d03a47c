"""Switchyard plugin SDK for Python 3 (standard library only).

Speaks the Switchyard protocol v1 (JSON-RPC 2.0, one JSON object per line) on stdin/stdout. The spec is
Protocol/README.md; this package is a convenience, not a requirement: any program that follows the spec works.
`switchyard.client` is the other side: a client of a running host's control socket.

stdout belongs to the protocol: `Plugin.run()` writes messages to fd 1 itself and points `sys.stdout` at stderr, so a
stray print() lands in the host log instead of corrupting the stream.
"""
import json
import sys

# The major version is the newest protocol version this SDK speaks (Protocol/CHANGES.md); minor and patch count the
# SDK's own releases within it. pyproject.toml carries the same number.
__version__ = "1.0.0"

PROTOCOL_VERSIONS = [1]

# How much of a handler's traceback goes into the error's data: the answer must stay one protocol line (§6's
# maxLineBytes). The end is kept, where the exception is; stderr gets all of it.
MAX_TRACEBACK_CHARS = 16384

# JSON-RPC and Switchyard error codes (Protocol/README.md, "Error codes").
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
INSTANCE_NOT_FOUND = -32015
UNSUPPORTED_PROTOCOL_VERSION = -32002
ROUTE_NOT_FOUND = -32010
NOT_ALLOWED = -32011
REJECTED_BY_GUARD = -32013
DEEP_LINK_INVALID = -32014
COMPOSITION_ERROR = -32017


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


def _fits(value, kind):
    if kind == "any":
        return True
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float))
    return isinstance(value, {"string": str, "object": dict, "array": list}.get(kind, ()))


def _check_params(route, params):
    """Params that do not fit the route's declared ones are refused with -32602 naming the param (spec §7): the
    host checks them before it asks, but a plugin must not act on params of the wrong type either."""
    if route.get("params") is None:
        return
    params = params or {}
    for declared in route["params"]:
        name = declared["name"]
        if params.get(name) is None:
            if declared.get("required", True):
                raise RPCError(INVALID_PARAMS, "route '%s' needs param '%s'" % (route["name"], name), {"field": name})
        elif not _fits(params[name], declared.get("type", "any")):
            raise RPCError(INVALID_PARAMS, "route '%s': param '%s' must be %s" % (route["name"], name, declared.get("type")),
                           {"field": name})


def _captures(pattern):
    """The params a deep-link pattern captures, as the host reads them (Protocol/README.md §13): `:name` and
    `{name}` one segment each, `**name` the rest (`**` alone is captured as `**`)."""
    names = []
    for part in pattern.split("/"):
        if part.startswith("**"):
            names.append(part[2:] or "**")
        elif part.startswith(":") and len(part) > 1:
            names.append(part[1:])
        elif part.startswith("{") and part.endswith("}") and len(part) > 2:
            names.append(part[1:-1])
    return names


def _action(action):
    """An action declaration: a name, or a dict {name, params?} (params declared like a route's)."""
    if isinstance(action, str):
        return {"name": action}
    declared = dict(action)
    if declared.get("params") is not None:
        declared["params"] = [p if isinstance(p, dict) else {"name": p, "type": "string"} for p in declared["params"]]
    return declared


def _params(params):
    return [p if isinstance(p, dict) else {"name": p, "type": "string"} for p in params]


def _route(name, transition, deep_link=None, target=None, plugin=None, params=None, actions=None, transitions=None,
           presentation=None, target_params=None):
    route = {"name": name, "transition": transition}
    if deep_link is not None:
        route["deepLink"] = deep_link
    if params is not None:
        route["params"] = _params(params)
    if target is not None:
        route["target"] = {"type": target} if plugin is None else {"plugin": plugin, "type": target}
    if target_params is not None:
        # What the route creates its target with (spec §5): composition checks it against the target type's params.
        route["targetParams"] = _params(target_params)
    if actions is not None:
        # The actions the route's screen emits (user/action, spec §12.6), handled by Coordinator.action().
        route["actions"] = [_action(a) for a in actions]
    if transitions is not None:
        # Other transitions a route step may pick ({"op": "route", ..., "transition": "fullScreen"}), spec §12.8.
        route["transitions"] = list(transitions)
    if presentation is not None:
        # {"detents": [...], "interactiveDismissDisabled": True, "customTransition": "..."}: for the UI shell.
        route["presentation"] = dict(presentation)
    return route


def root(name, **options):
    """A root route of a stack coordinator."""
    return _route(name, "root", **options)


def push(name, **options):
    return _route(name, "push", **options)


def modal(name, **options):
    return _route(name, "modal", **options)


def full_screen(name, **options):
    return _route(name, "fullScreen", **options)


def tab(name, **options):
    return _route(name, "tab", **options)


def child(name, **options):
    return _route(name, "child", **options)


class Coordinator:
    """Base class of a coordinator type. Declare `type_name`, `kind` ("stack", "tabs", "wrapper"), `routes` and,
    for a stack, `initial` (the root shown at creation). For each route define a method with the route's name,
    taking (self, params, link) and returning screen(...) or coordinator(...), or raising reject(...). A route
    without its method is refused at start-up (declaration_problems()), not when it is first taken.
    `creation_params` declares the params an instance is created with (self.params), like a route's `params`; a
    route of another plugin that opens the type declares what it passes with `target_params`."""

    type_name = None
    kind = "stack"
    routes = []
    initial = None
    custom_deep_links = False
    creation_params = None

    def __init__(self, plugin, instance, params):
        self.plugin = plugin
        self.instance = instance
        self.params = params
        self.state = None

    # Hooks; override as needed.
    def initial_root(self):
        """(route, params) of the root to show at creation."""
        return self.initial, None

    def initial_tabs(self):
        """For a tabs coordinator: the tab names shown at creation, in order (None: every declared tab); the
        others can join later with a setTabs step (spec §12.7)."""
        return None

    def did_destroy(self):
        pass

    def dismissed(self, route, entry, reason):
        pass

    def tab_selected(self, tab_name, is_repeat):
        pass

    def appeared(self, entry):
        """One of this instance's entries became visible again (spec §12.9). Overriding it declares the type's
        `appearance`: types that do not are never told."""

    def action(self, name, params, route, entry):
        """A screen of this instance emitted a declared action (spec §12.6): return the steps to take from this
        instance (one chain, one revision), or None to change nothing. Raise RPCError to refuse it."""
        return None

    @classmethod
    def handle_deep_link(cls, segments, query):
        """For custom_deep_links types: return (route, params, consumed) or raise reject-like RPCError."""
        raise RPCError(DEEP_LINK_INVALID, "not handled")

    # Navigation from this coordinator's logic (sent after the current answer; `done` gets (result, error)).
    def navigate(self, steps, done=None):
        self.plugin.defer_call("navigate", {"instance": self.instance, "steps": steps}, done)

    def query(self, query, route=None, done=None, **extra):
        """A read-only question about this instance (spec §12.4: isRoot, currentRoute, canDismiss, hasParent,
        presentedCount, newest with type=...), sent after the current answer; `done` gets (result, error)."""
        request = dict(extra, query=query, instance=self.instance)
        if route is not None:
            request["route"] = route
        answer = None if done is None else (lambda result, error: done((result or {}).get("result"), error))
        self.plugin.defer_call("tree/query", request, answer)

    @classmethod
    def declaration(cls):
        declaration = {"type": cls.type_name, "kind": cls.kind, "routes": cls.routes}
        if cls.initial is not None:
            declaration["initialRoute"] = cls.initial
        if cls.custom_deep_links:
            declaration["customDeepLinks"] = True
        if cls.creation_params is not None:
            # The params an instance is created with, declared: the contract with whoever opens the type (spec §5).
            declaration["params"] = _params(cls.creation_params)
        if cls.appeared is not Coordinator.appeared:
            declaration["appearance"] = True
        return declaration

    @classmethod
    def declaration_problems(cls):
        """What in the declaration would fail only when the route is taken: a route without its method, a method
        that cannot take (params, link), a deep-link capture that is not a declared param. One line each, naming
        the type and the route; `Plugin.run()` refuses to start with any."""
        problems = []
        own_dispatch = cls.content_for is not Coordinator.content_for
        for route in cls.routes:
            name = route.get("name")
            signature = "def %s(self, params, link): ..." % name
            if not own_dispatch:
                handler = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
                if handler is None or not callable(handler):
                    problems.append("route '%s' is declared but the class %s has no method '%s' (%s)"
                                    % (name, cls.__name__, name, signature))
                elif name in Coordinator.__dict__:
                    problems.append("route '%s' is named like the Coordinator method '%s', which is not a route's "
                                    "method: rename the route" % (name, name))
                else:
                    code = getattr(handler, "__code__", None)
                    if code is not None and not isinstance(handler, (staticmethod, classmethod)):
                        required = code.co_argcount - len(handler.__defaults__ or ())
                        if (code.co_argcount < 3 and not code.co_flags & 0x04) or required > 3:  # 0x04: *args
                            arguments = ", ".join(code.co_varnames[:code.co_argcount])
                            problems.append("route '%s': method '%s' takes (%s), but is called with the route's params "
                                            "and the deep link (%s)" % (name, name, arguments, signature))
            declared = route.get("params")
            if declared is not None:
                names = [p.get("name") for p in declared]
                listed = ("declares only %s" % ", ".join("'%s'" % n for n in names)) if names else "declares no params"
                for capture in _captures(route.get("deepLink") or ""):
                    if capture not in names:
                        problems.append("route '%s': deep-link pattern '%s' captures '%s', but the route %s: add '%s' "
                                        "to params=[...] or drop the capture"
                                        % (name, route.get("deepLink"), capture, listed, capture))
        return ["%s: %s" % (cls.type_name, problem) for problem in problems]

    def content_for(self, route, params, link=None):
        factory = getattr(self, route, None)
        if factory is None:
            raise RPCError(ROUTE_NOT_FOUND, "%s has no route '%s'" % (self.type_name, route), {"route": route})
        return factory(params or {}, link)


class Plugin:
    def __init__(self, name, version, coordinators=None):
        self.name = name
        self.version = version
        self.coordinators = list(coordinators or [])
        self.types = {}
        self.instances = {}
        self.handlers = {}
        self.notification_handlers = {}
        self.plugin_name = None
        self._next_id = 1
        self._pending = {}
        self._deferred = []
        self._shutdown = False
        self._out = None
        # What declaration_problems() found in the registered types: reported at start and refused in initialize.
        self._problems = []

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

    def coordinator(self, cls):
        """Class decorator: registers a Coordinator subclass and serves the coordinator/* methods for it."""
        self.types[cls.type_name] = cls
        self.coordinators.append(cls.declaration())
        self._problems.extend(cls.declaration_problems())
        if "coordinator/create" not in self.handlers:
            self.handlers["coordinator/create"] = self._create
            self.handlers["coordinator/route"] = self._route
            self.handlers["coordinator/destroy"] = self._destroy
            self.handlers["coordinator/deepLink"] = self._deep_link
            self.handlers["coordinator/action"] = self._action
            self.notification_handlers["coordinator/dismissed"] = self._dismissed
            self.notification_handlers["coordinator/tabSelected"] = self._tab_selected
            self.notification_handlers["coordinator/appeared"] = self._appeared
        return cls

    # -- coordinator methods -------------------------------------------------------------------------------------
    def _create(self, params):
        cls = self.types.get(params.get("type"))
        if cls is None:
            raise RPCError(INVALID_PARAMS, "no coordinator type '%s'" % params.get("type"), {"field": "type"})
        instance_id = params["instance"]
        existing = self.instances.get(instance_id) if params.get("reason") == "restart" else None
        coordinator = existing or cls(self, instance_id, params.get("params"))
        coordinator.state = params.get("state")
        self.instances[instance_id] = coordinator
        if params.get("reason") == "restore":
            return {}
        result = {}
        if cls.kind == "stack":
            route, route_params = coordinator.initial_root()
            result["root"] = {"route": route, "content": coordinator.content_for(route, route_params)}
            if route_params is not None:
                result["root"]["params"] = route_params
        elif cls.kind == "tabs":
            declared = [r["name"] for r in cls.routes if r["transition"] == "tab"]
            shown = coordinator.initial_tabs() or declared
            # A name that is not a declared tab is passed on as it is: the host's invalidAnswer names it.
            result["tabs"] = [{"route": name, "content": coordinator.content_for(name, None) if name in declared else screen(name)}
                              for name in shown]
        else:
            child_route = next(r for r in cls.routes if r["transition"] == "child")
            result["child"] = coordinator.content_for(child_route["name"], None)
        if coordinator.state is not None:
            result["state"] = coordinator.state
        return result

    def _route(self, params):
        coordinator = self.instances.get(params["instance"])
        if coordinator is None:
            raise RPCError(INSTANCE_NOT_FOUND, "no instance %s" % params["instance"], {"instance": params["instance"]})
        declared = next((r for r in type(coordinator).routes if r.get("name") == params["route"]), None)
        if declared is not None:
            _check_params(declared, params.get("params"))
        content = coordinator.content_for(params["route"], params.get("params"), params.get("link"))
        result = {"content": content}
        if coordinator.state is not None:
            result["state"] = coordinator.state
        return result

    def _destroy(self, params):
        coordinator = self.instances.pop(params["instance"], None)
        if coordinator is not None:
            coordinator.did_destroy()
        return {}

    def _deep_link(self, params):
        cls = self.types.get(params.get("type"))
        if cls is None or not cls.custom_deep_links:
            raise RPCError(DEEP_LINK_INVALID, "%s does not handle deep links itself" % params.get("type"))
        route, route_params, consumed = cls.handle_deep_link(params.get("segments", []), params.get("query", {}))
        result = {"route": route, "consumed": consumed}
        if route_params is not None:
            result["params"] = route_params
        return result

    def _action(self, params):
        coordinator = self.instances.get(params["instance"])
        if coordinator is None:
            raise RPCError(INSTANCE_NOT_FOUND, "no instance %s" % params["instance"], {"instance": params["instance"]})
        steps = coordinator.action(params["action"], params.get("params"), params["route"], params["entry"])
        return {"steps": list(steps)} if steps else {}

    def _dismissed(self, params):
        coordinator = self.instances.get(params.get("instance"))
        if coordinator is not None:
            coordinator.dismissed(params.get("route"), params.get("entry"), params.get("reason"))

    def _appeared(self, params):
        coordinator = self.instances.get(params.get("instance"))
        if coordinator is not None:
            coordinator.appeared(params.get("entry"))

    def _tab_selected(self, params):
        coordinator = self.instances.get(params.get("instance"))
        if coordinator is not None:
            coordinator.tab_selected(params.get("tab"), params.get("isRepeat"))

    # -- talking to the host -------------------------------------------------------------------------------------
    def send(self, message):
        message["jsonrpc"] = "2.0"
        self._out.write(json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n")
        self._out.flush()

    def call(self, method, params=None, done=None):
        """Sends a request to the host now; `done(result, error)` runs when the answer arrives."""
        request_id = "py-%d" % self._next_id
        self._next_id += 1
        if done is not None:
            self._pending[request_id] = done
        self.send({"id": request_id, "method": method, "params": params or {}})
        return request_id

    def defer_call(self, method, params=None, done=None):
        """Like call(), but sent after the answer being written now (so the host sees the answer first)."""
        self._deferred.append((method, params, done))

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
        if self._problems:
            # The host logs this message as the handshake failure: the only line a user sees by default.
            raise RPCError(COMPOSITION_ERROR, "; ".join(self._problems), {"problems": self._problems})
        self.plugin_name = params.get("pluginName")
        return {"protocolVersion": max(common), "plugin": {"name": self.name, "version": self.version},
                "coordinators": self.coordinators}

    def _dispatch(self, message):
        method = message.get("method")
        if method is None:
            request_id = message.get("id")
            callback = self._pending.pop(request_id, None)
            if callback:
                try:
                    callback(message.get("result"), message.get("error"))
                except Exception:
                    _report("the callback of request %s" % request_id)
            return
        params = message.get("params") or {}
        if "id" not in message:
            if method == "exit":
                sys.exit(0 if self._shutdown else 1)
            handler = self.notification_handlers.get(method)
            if handler:
                try:
                    handler(params)
                except Exception:  # nobody to answer: the traceback goes to the host log, the plugin goes on
                    _report(method)
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
            # The traceback is what makes the bug fixable: it goes with the answer (Protocol/README.md §7) and to
            # stderr, the host log, for the case where the answer is seen by nobody.
            self.send({"id": request_id, "error": {
                "code": INTERNAL_ERROR, "message": "%s: %s" % (type(error).__name__, error),
                "data": {"type": type(error).__name__, "traceback": _report(method)[-MAX_TRACEBACK_CHARS:]}}})

    def run(self):
        # fd 1 carries the protocol only; print() and anything else using sys.stdout goes to stderr. No extra
        # descriptor is opened, so the plugin holds exactly 0, 1 and 2.
        self._out = open(1, "w", encoding="utf-8", buffering=1, closefd=False)
        sys.stdout = sys.stderr
        for problem in self._problems:  # at once, for whoever runs the plugin by hand
            sys.stderr.write("switchyard: error: %s\n" % problem)
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
            while self._deferred:
                method, params, done = self._deferred.pop(0)
                self.call(method, params, done)
        # stdin reached EOF: the host closed it or died. The contract is to exit.
        sys.exit(0)


def _report(what):
    """Writes the exception being handled to stderr, naming what failed, and returns its traceback."""
    import traceback  # here, not at the top: ~3 ms of every plugin's start-up, for the rare failure
    text = traceback.format_exc()
    sys.stderr.write("switchyard: %s failed:\n%s" % (what, text))
    sys.stderr.flush()
    return text


def screen(name, **props):
    content = {"name": name}
    if props:
        content["props"] = props
    return {"screen": content}


def coordinator(type_name, plugin=None, params=None):
    reference = {"type": type_name}
    if plugin:
        reference["plugin"] = plugin
    if params is not None:
        reference["params"] = params
    return {"coordinator": reference}
