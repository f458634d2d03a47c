"""A plugin: its coordinator types, the `coordinator/*` methods served for them (§8), and the handshake (§3)."""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Sequence, Type, TypeVar

from ._async import MaybeAwaitable, current_scope, sequence, then
from ._site import HandlerSite
from .connection import Connection
from .coordinator import Coordinator, DeepLinkResolution
from .declarations import Content, Link, Params, check_params, screen
from .errors import (COMPOSITION_ERROR, DEEP_LINK_INVALID, INSTANCE_NOT_FOUND, INTERNAL_ERROR, INVALID_PARAMS,
                     UNSUPPORTED_PROTOCOL_VERSION, RPCError)

__all__ = ["Plugin", "PROTOCOL_VERSIONS"]

#: The protocol versions this SDK speaks (Protocol/CHANGES.md).
PROTOCOL_VERSIONS = [1]

C = TypeVar("C", bound=Type[Coordinator])


class Plugin(Connection):
    """A plugin process: `name` and `version` are what `initialize` reports; register coordinator types with the
    `@plugin.coordinator` class decorator, then call `run()`.

    `coordinators` may list declarations (dicts, §5) for a plugin that serves `coordinator/*` itself through
    `@plugin.request` handlers."""

    def __init__(self, name: str, version: str, coordinators: Optional[Sequence[Dict[str, Any]]] = None) -> None:
        super().__init__()
        self.name = name
        self.version = version
        #: The route table sent in the `initialize` result.
        self.coordinators: List[Dict[str, Any]] = list(coordinators or [])
        #: The registered types by name, and the live instances by id.
        self.types: Dict[str, Type[Coordinator]] = {}
        self.instances: Dict[int, Coordinator] = {}
        #: The name the manifest gives the plugin (from `initialize`).
        self.plugin_name: Optional[str] = None
        # What declaration_problems() found in the registered types: reported at start and refused in initialize.
        self._problems: List[str] = []

    def coordinator(self, cls: C) -> C:
        """Class decorator: registers a Coordinator subclass and serves the coordinator/* methods for it."""
        self.types[str(cls.type_name)] = cls
        self.coordinators.append(cls.declaration())
        self._problems.extend(cls.declaration_problems())
        if "coordinator/create" not in self.handlers:
            self.handlers.update({
                "coordinator/create": self._create, "coordinator/route": self._route,
                "coordinator/destroy": self._destroy, "coordinator/deepLink": self._deep_link,
                "coordinator/action": self._action,
            })
            self.notification_handlers.update({
                "coordinator/dismissed": self._dismissed, "coordinator/tabSelected": self._tab_selected,
                "coordinator/appeared": self._appeared,
            })
        return cls

    # -- coordinator methods -----------------------------------------------------------------------------------------
    def _instance(self, params: Dict[str, Any]) -> Coordinator:
        coordinator = self.instances.get(params["instance"])
        if coordinator is None:
            raise RPCError(INSTANCE_NOT_FOUND, "no instance %s" % params["instance"], {"instance": params["instance"]})
        return coordinator

    @staticmethod
    def _with_state(coordinator: Coordinator, result: Dict[str, Any]) -> Dict[str, Any]:
        if coordinator.state is not None:
            result["state"] = coordinator.state
        return result

    def _create(self, params: Dict[str, Any]) -> MaybeAwaitable[Dict[str, Any]]:
        cls = self.types.get(params.get("type", ""))
        if cls is None:
            raise RPCError(INVALID_PARAMS, "no coordinator type '%s'" % params.get("type"), {"field": "type"})
        instance_id = params["instance"]
        existing = self.instances.get(instance_id) if params.get("reason") == "restart" else None
        coordinator = existing or cls(self, instance_id, params.get("params"))
        coordinator.state = params.get("state")
        self.instances[instance_id] = coordinator
        if params.get("reason") == "restore":
            return {}
        if params.get("reason") == "upgrade":
            def migrated(state: Any) -> Dict[str, Any]:
                coordinator.state = state
                return self._with_state(coordinator, {})
            return then(coordinator.migrate(str(params.get("fromVersion", "")), params.get("state")), migrated)
        return then(self._initial_content(coordinator), lambda result: self._with_state(coordinator, result))

    def _content(self, coordinator: Coordinator, route: str, params: Optional[Params],
                 link: Optional[Link] = None) -> MaybeAwaitable[Content]:
        """What the author's method for `route` returns, checked: an exception it raises, or a value that is not
        content, is answered naming the route, the type, the method and its file and line (HandlerSite)."""
        cls = type(coordinator)
        name = "content_for" if cls.content_for is not Coordinator.content_for else route
        scope = current_scope.get()
        site = HandlerSite("route '%s' of %s" % (route, cls.type_name), "%s.%s" % (cls.__name__, name),
                           getattr(cls, name, None), scope.method if scope is not None else "coordinator/route",
                           expected="a screen or a coordinator", returns='return screen("Name", key=value) or return coordinator("type")',
                           refuse='raise switchyard.reject("why") to refuse the route on purpose')
        if scope is not None:
            scope.site = site

        def checked(content: Any) -> Content:
            if not isinstance(content, dict):
                raise RPCError(INTERNAL_ERROR, site.returned(content), dict(site.data(), type="InvalidContent"))
            return content
        return then(coordinator.content_for(route, params, link), checked)

    def _initial_content(self, coordinator: Coordinator) -> MaybeAwaitable[Dict[str, Any]]:
        cls = type(coordinator)
        if cls.kind == "stack":
            site = HandlerSite("the initial root of %s" % cls.type_name, "%s.initial_root" % cls.__name__,
                               cls.initial_root, "coordinator/create", expected="a (route, params) pair",
                               returns='return "route", None (or declare initial = "route")',
                               refuse="raise switchyard.RPCError(...) to refuse the creation")
            scope = current_scope.get()
            if scope is not None:
                scope.site = site

            def show(root: Any) -> MaybeAwaitable[Dict[str, Any]]:
                if not (isinstance(root, (tuple, list)) and len(root) == 2 and isinstance(root[0], str)):
                    raise RPCError(INTERNAL_ERROR, site.returned(root), dict(site.data(), type="InvalidRoot"))
                route, route_params = root

                def answer(content: Content) -> Dict[str, Any]:
                    shown: Dict[str, Any] = {"route": route, "content": content}
                    if route_params is not None:
                        shown["params"] = route_params
                    return {"root": shown}
                return then(self._content(coordinator, route, route_params), answer)
            return then(coordinator.initial_root(), show)
        if cls.kind == "tabs":
            declared = [r["name"] for r in cls.routes if r["transition"] == "tab"]

            def tab(name: str) -> MaybeAwaitable[Dict[str, Any]]:
                # A name that is not a declared tab is passed on as it is: the host's invalidAnswer names it.
                content = self._content(coordinator, name, None) if name in declared else screen(name)
                return then(content, lambda shown: {"route": name, "content": shown})
            return then(coordinator.initial_tabs(),
                        lambda shown: then(sequence(list(shown or declared), tab), lambda tabs: {"tabs": tabs}))
        child_route = next(r for r in cls.routes if r["transition"] == "child")
        return then(self._content(coordinator, child_route["name"], None), lambda content: {"child": content})

    def _route(self, params: Dict[str, Any]) -> MaybeAwaitable[Dict[str, Any]]:
        coordinator = self._instance(params)
        declared = next((r for r in type(coordinator).routes if r.get("name") == params["route"]), None)
        if declared is not None:
            check_params(declared, params.get("params"))
        content = self._content(coordinator, params["route"], params.get("params"), params.get("link"))
        return then(content, lambda shown: self._with_state(coordinator, {"content": shown}))

    def _destroy(self, params: Dict[str, Any]) -> MaybeAwaitable[Dict[str, Any]]:
        coordinator = self.instances.pop(params["instance"], None)
        if coordinator is None:
            return {}
        return then(coordinator.did_destroy(), lambda _: {})

    def _deep_link(self, params: Dict[str, Any]) -> MaybeAwaitable[Dict[str, Any]]:
        cls = self.types.get(params.get("type", ""))
        if cls is None or not cls.custom_deep_links:
            raise RPCError(DEEP_LINK_INVALID, "%s does not handle deep links itself" % params.get("type"))

        def answer(resolved: DeepLinkResolution) -> Dict[str, Any]:
            route, route_params, consumed = resolved
            result: Dict[str, Any] = {"route": route, "consumed": consumed}
            if route_params is not None:
                result["params"] = route_params
            return result
        return then(cls.handle_deep_link(params.get("segments", []), params.get("query", {})), answer)

    def _action(self, params: Dict[str, Any]) -> MaybeAwaitable[Dict[str, Any]]:
        coordinator = self._instance(params)
        cls = type(coordinator)
        site = HandlerSite("action '%s' of %s (on route '%s')" % (params["action"], cls.type_name, params["route"]),
                           "%s.action" % cls.__name__, cls.action, "coordinator/action",
                           expected="a list of steps or None", returns="return [step, ...] or return None",
                           refuse="raise switchyard.RPCError(switchyard.NOT_ALLOWED, \"why\") to refuse the action")
        scope = current_scope.get()
        if scope is not None:
            scope.site = site

        def answer(chain: Any) -> Dict[str, Any]:
            if chain is not None and not isinstance(chain, (list, tuple)):
                raise RPCError(INTERNAL_ERROR, site.returned(chain), dict(site.data(), type="InvalidSteps"))
            return {"steps": list(chain)} if chain else {}
        steps = coordinator.action(params["action"], params.get("params"), params["route"], params["entry"])
        return then(steps, answer)

    def _dismissed(self, params: Dict[str, Any]) -> MaybeAwaitable[None]:
        coordinator = self.instances.get(params.get("instance", -1))
        if coordinator is not None:
            return coordinator.dismissed(params.get("route", ""), params.get("entry", 0), params.get("reason", ""))
        return None

    def _appeared(self, params: Dict[str, Any]) -> MaybeAwaitable[None]:
        coordinator = self.instances.get(params.get("instance", -1))
        return coordinator.appeared(params.get("entry", 0)) if coordinator is not None else None

    def _tab_selected(self, params: Dict[str, Any]) -> MaybeAwaitable[None]:
        coordinator = self.instances.get(params.get("instance", -1))
        if coordinator is not None:
            return coordinator.tab_selected(params.get("tab", ""), bool(params.get("isRepeat")))
        return None

    # -- the handshake -----------------------------------------------------------------------------------------------
    def _handle(self, method: str, params: Dict[str, Any]) -> MaybeAwaitable[Any]:
        if method == "initialize":
            return self._initialize(params)
        return super()._handle(method, params)

    def _initialize(self, params: Params) -> Dict[str, Any]:
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

    def _start(self) -> None:
        super()._start()
        for problem in self._problems:  # at once, for whoever runs the plugin by hand
            sys.stderr.write("switchyard: error: %s\n" % problem)
