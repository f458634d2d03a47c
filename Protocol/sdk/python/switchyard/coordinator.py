"""The base class of a coordinator type, and the check of its declaration at start-up."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast, ClassVar, Dict, List, Optional, Sequence, Tuple, TypedDict

from ._async import MaybeAwaitable
from .declarations import Content, Link, ParamDeclaration, Params, RouteDeclaration, Step, _params, captures
from .errors import DEEP_LINK_INVALID, ROUTE_NOT_FOUND, RPCError
from .reply import Done, Reply

if TYPE_CHECKING:
    from .plugin import Plugin

__all__ = ["Coordinator", "NavigateResult", "DeepLinkResolution"]


class NavigateResult(TypedDict):
    """What a `navigate` answers: the tree's revision afterwards and the instance the last step landed on."""

    revision: int
    instance: int


#: What handle_deep_link() answers: (route, params or None, how many segments it consumed).
DeepLinkResolution = Tuple[str, Optional[Params], int]


class Coordinator:
    """Base class of a coordinator type. Declare `type_name`, `kind` ("stack", "tabs", "wrapper"), `routes` and,
    for a stack, `initial` (the root shown at creation).

    For each route define a method with the route's name, taking `(self, params, link)` and returning screen(...)
    or coordinator(...), or raising reject(...) (a guard). It may be `async def`: the host's request is answered
    when it completes, and the plugin answers other requests meanwhile. A route without its method is refused at
    start-up (declaration_problems()), not when it is first taken.

    The hooks below may be `async def` as well."""

    #: The type's name, unique in the plugin: what routes and manifests name.
    type_name: ClassVar[Optional[str]] = None
    #: "stack" (a root and a stack of entries), "tabs" or "wrapper" (one child).
    kind: ClassVar[str] = "stack"
    #: The route table (root(), push(), modal(), full_screen(), tab(), child()).
    routes: ClassVar[List[RouteDeclaration]] = []
    #: For a stack: the root route shown at creation.
    initial: ClassVar[Optional[str]] = None
    #: True when handle_deep_link() resolves the links into this type (§8, `coordinator/deepLink`).
    custom_deep_links: ClassVar[bool] = False
    #: The params an instance is created with (`self.params`), declared like a route's `params`: the contract with
    #: whoever opens the type; a route of another plugin that opens it declares what it passes with `target_params`.
    creation_params: ClassVar[Optional[Sequence[ParamDeclaration]]] = None

    plugin: "Plugin"
    instance: int
    params: Optional[Params]
    state: Any

    def __init__(self, plugin: "Plugin", instance: int, params: Optional[Params]) -> None:
        """An instance the host created: `instance` is its id, `params` what the route that opened it gave."""
        self.plugin = plugin
        self.instance = instance
        self.params = params
        #: Any JSON the host keeps for the instance and hands back after a restart (§16).
        self.state = None

    # -- hooks; override as needed ---------------------------------------------------------------------------------
    def initial_root(self) -> MaybeAwaitable[Tuple[Optional[str], Optional[Params]]]:
        """(route, params) of the root to show at creation; default: (`initial`, None)."""
        return self.initial, None

    def initial_tabs(self) -> MaybeAwaitable[Optional[Sequence[str]]]:
        """For a tabs coordinator: the tab names shown at creation, in order (None: every declared tab); the
        others can join later with a setTabs step (spec §12.7)."""
        return None

    def migrate(self, from_version: str, state: Any) -> MaybeAwaitable[Any]:
        """A new version of the plugin takes this instance over from `from_version` (`coordinator/create`, reason
        `upgrade`, spec §20.1): return `state`, as that version wrote it, in this version's shape (Erlang's
        `code_change`). Default: the state as it is. Raising refuses the upgrade, which rolls back."""
        return state

    def did_destroy(self) -> MaybeAwaitable[None]:
        """The instance left the tree (`coordinator/destroy`): release what it holds."""
        return None

    def dismissed(self, route: str, entry: int, reason: str) -> MaybeAwaitable[None]:
        """An entry of this instance left the tree; `reason` is "user" or "navigation" (Stinsen's onDismiss)."""
        return None

    def tab_selected(self, tab_name: str, is_repeat: bool) -> MaybeAwaitable[None]:
        """A tab of this tabs instance was selected (`is_repeat`: it already was)."""
        return None

    def appeared(self, entry: int) -> MaybeAwaitable[None]:
        """One of this instance's entries became visible again (spec §12.9). Overriding it declares the type's
        `appearance`: types that do not are never told."""
        return None

    def action(self, name: str, params: Optional[Params], route: str, entry: int) -> MaybeAwaitable[Optional[List[Step]]]:
        """A screen of this instance emitted a declared action (spec §12.6): return the steps to take from this
        instance (one chain, one revision), or None to change nothing. Raise RPCError to refuse it."""
        return None

    @classmethod
    def handle_deep_link(cls, segments: List[str], query: Dict[str, str]) -> MaybeAwaitable[DeepLinkResolution]:
        """For custom_deep_links types: return (route, params, consumed) for the remaining `segments`, or raise an
        RPCError (DEEP_LINK_INVALID) to refuse the link."""
        raise RPCError(DEEP_LINK_INVALID, "not handled")

    # -- navigation from this coordinator's logic ------------------------------------------------------------------
    def navigate(self, steps: List[Step], done: Optional[Done] = None) -> Reply[NavigateResult]:
        """Applies `steps` from this instance as one chain (§12). Sent after the answer being written, if any: await
        the Reply for the result (not in the handler that called it, which must answer first), or pass
        `done(result, error)`."""
        return self.plugin._defer("navigate", {"instance": self.instance, "steps": steps}, done,
                                  lambda result: cast(NavigateResult, result))

    def query(self, query: str, route: Optional[str] = None, done: Optional[Done] = None,
              **extra: Any) -> Reply[Any]:
        """A read-only question about this instance (spec §12.4: isRoot, currentRoute, canDismiss, hasParent,
        presentedCount, newest with type=...). Sent like navigate(); awaiting gives the answer (its `result`
        member), and `done` gets `(answer, error)`."""
        request = dict(extra, query=query, instance=self.instance)
        if route is not None:
            request["route"] = route
        answer: Optional[Done] = None
        if done is not None:
            callback = done
            answer = lambda result, error: callback((result or {}).get("result"), error)  # noqa: E731
        return self.plugin._defer("tree/query", request, answer, lambda result: (result or {}).get("result"))

    # -- the declaration -------------------------------------------------------------------------------------------
    @classmethod
    def declaration(cls) -> Dict[str, Any]:
        """The type's entry in the `initialize` result's `coordinators` (§5)."""
        declaration: Dict[str, Any] = {"type": cls.type_name, "kind": cls.kind, "routes": cls.routes}
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
    def declaration_problems(cls) -> List[str]:
        """What in the declaration would fail only when the route is taken: a route without its method, a method
        that cannot take (params, link), a deep-link capture that is not a declared param, custom deep links
        without handle_deep_link(). One line each, naming the type and the route; `Plugin.run()` refuses to start
        with any."""
        problems = []
        own_dispatch = cls.content_for is not Coordinator.content_for
        for route in cls.routes:
            name = route.get("name")
            if not own_dispatch:
                problems.extend(cls._method_problems(str(name)))
            declared = route.get("params")
            if declared is not None:
                names = [p.get("name") for p in declared]
                listed = ("declares only %s" % ", ".join("'%s'" % n for n in names)) if names else "declares no params"
                for capture in captures(route.get("deepLink") or ""):
                    if capture not in names:
                        problems.append("route '%s': deep-link pattern '%s' captures '%s', but the route %s: add '%s' "
                                        "to params=[...] or drop the capture"
                                        % (name, route.get("deepLink"), capture, listed, capture))
        if cls.custom_deep_links and cls.handle_deep_link.__func__ is Coordinator.handle_deep_link.__func__:  # type: ignore[attr-defined]
            problems.append("custom_deep_links is True but the class %s does not define handle_deep_link(cls, "
                            "segments, query)" % cls.__name__)
        return ["%s: %s" % (cls.type_name, problem) for problem in problems]

    @classmethod
    def _method_problems(cls, name: str) -> List[str]:
        signature = "def %s(self, params, link): ..." % name
        handler = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
        if handler is None and not name.isidentifier():
            # `def sign-out(...)` is not Python: such a route is answered by content_for(), or renamed.
            return ["route '%s' is declared but a Python method cannot be named '%s': override "
                    "content_for(self, route, params, link=None), which is called with route == \"%s\", or rename "
                    "the route (for example '%s')" % (name, name, name, "".join(c if c.isalnum() else "_" for c in name))]
        if handler is None or not callable(handler):
            return ["route '%s' is declared but the class %s has no method '%s' (%s)"
                    % (name, cls.__name__, name, signature)]
        if name in Coordinator.__dict__:
            return ["route '%s' is named like the Coordinator method '%s', which is not a route's method: rename the "
                    "route" % (name, name)]
        code = getattr(handler, "__code__", None)
        if code is not None and not isinstance(handler, (staticmethod, classmethod)):
            required = code.co_argcount - len(getattr(handler, "__defaults__", None) or ())
            if (code.co_argcount < 3 and not code.co_flags & 0x04) or required > 3:  # 0x04: *args
                arguments = ", ".join(code.co_varnames[:code.co_argcount])
                return ["route '%s': method '%s' takes (%s), but is called with the route's params and the deep link "
                        "(%s)" % (name, name, arguments, signature)]
        return []

    def content_for(self, route: str, params: Optional[Params], link: Optional[Link] = None) -> MaybeAwaitable[Content]:
        """What `route` shows: calls the method named like the route with (params, link). Override it to dispatch
        routes yourself (then no method per route is required)."""
        factory = getattr(self, route, None)
        if factory is None:
            raise RPCError(ROUTE_NOT_FOUND, "%s has no route '%s'" % (self.type_name, route), {"route": route})
        content: MaybeAwaitable[Content] = factory(params or {}, link)
        return content
