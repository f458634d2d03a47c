"""What a plugin declares and answers: route declarations (§5), screen and coordinator contents (§8), and the check of
a route's params against its declaration."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, TypedDict, Union

from .errors import INVALID_PARAMS, RPCError

__all__ = [
    "Params", "Content", "Step", "RouteDeclaration", "ParamDeclaration", "Link",
    "RouteHelper", "root", "push", "modal", "full_screen", "tab", "child", "screen", "coordinator",
]

#: A route's or a coordinator's params: a JSON object.
Params = Dict[str, Any]
#: What a route shows: `{"screen": {...}}` or `{"coordinator": {...}}` (make it with screen() or coordinator()).
Content = Dict[str, Any]
#: One navigation step (§12.1), e.g. `{"op": "route", "route": "todo", "params": {"id": "42"}}`.
Step = Dict[str, Any]
#: A route of a coordinator type's table (§5), as root(), push()... make it.
RouteDeclaration = Dict[str, Any]
#: A declared param: `{"name", "type"?, "required"?}`, or only its name for a required string.
ParamDeclaration = Union[str, Dict[str, Any]]


class Link(TypedDict, total=False):
    """The deep link that takes a route (§13.4), when one does: the URL, its segments, the index of the first one this
    hop consumes, and the query items."""

    url: str
    segments: List[str]
    index: int
    query: Dict[str, str]


def _params(params: Sequence[ParamDeclaration]) -> List[Dict[str, Any]]:
    return [dict(p) if isinstance(p, dict) else {"name": p, "type": "string"} for p in params]


def _action(action: Union[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """An action declaration: a name, or a dict {name, params?} (params declared like a route's)."""
    if isinstance(action, str):
        return {"name": action}
    declared = dict(action)
    if declared.get("params") is not None:
        declared["params"] = _params(declared["params"])
    return declared


def _route(name: str, transition: str, deep_link: str | None = None, target: str | None = None,
           plugin: str | None = None, params: Sequence[ParamDeclaration] | None = None,
           actions: Sequence[Union[str, Mapping[str, Any]]] | None = None, transitions: Sequence[str] | None = None,
           presentation: Mapping[str, Any] | None = None,
           target_params: Sequence[ParamDeclaration] | None = None,
           tab_item: Mapping[str, Any] | None = None) -> RouteDeclaration:
    route: RouteDeclaration = {"name": name, "transition": transition}
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
    if tab_item is not None:
        # {"title", "symbol"?, "badge"?}: what the tab bar shows for a tab route (spec §21; ui.tab_item makes it).
        route["tabItem"] = dict(tab_item)
    return route


class RouteHelper:
    """Makes route declarations of one transition: `root`, `push`, `modal`, `full_screen`, `tab` and `child` are
    instances. Call it with the route's name and these keyword options:

    - `deep_link`: a pattern relative to the coordinator (`"todo/:id"`, `"files/**"`, §13);
    - `params`: declared params, names of required strings or dicts `{"name", "type", "required"}` (§5);
    - `target`, `plugin`: the coordinator type the route opens, and its plugin when it is another one;
    - `target_params`: the params the route creates its target with, declared like `params` (§5, §19);
    - `actions`: what the route's screen emits (names or `{"name", "params"}`, §12.6);
    - `transitions`: the other transitions a `route` step may pick (§12.8);
    - `presentation`: `{"detents", "interactiveDismissDisabled", "customTransition"}` for the UI shell (§12.8);
    - `tab_item`: on a tab, `{"title", "symbol"?, "badge"?}`, what the tab bar shows (§21; `ui.tab_item(...)`)."""

    transition: str

    def __init__(self, transition: str, doc: str) -> None:
        self.transition = transition
        self.__doc__ = doc

    def __call__(self, name: str, *, deep_link: str | None = None, target: str | None = None, plugin: str | None = None,
                 params: Sequence[ParamDeclaration] | None = None,
                 actions: Sequence[Union[str, Mapping[str, Any]]] | None = None,
                 transitions: Sequence[str] | None = None,
                 presentation: Mapping[str, Any] | None = None,
                 target_params: Sequence[ParamDeclaration] | None = None,
                 tab_item: Mapping[str, Any] | None = None) -> RouteDeclaration:
        """The declaration of the route `name` with this helper's transition and the options given."""
        return _route(name, self.transition, deep_link, target, plugin, params, actions, transitions, presentation,
                      target_params, tab_item)

    def __repr__(self) -> str:
        return "<switchyard route helper %r>" % self.transition


root = RouteHelper("root", "A root route of a stack coordinator: what `initial` names, or what a `setRoot` step picks.")
push = RouteHelper("push", "A route pushed onto a stack coordinator's stack.")
modal = RouteHelper("modal", "A route presented as a sheet over a stack.")
full_screen = RouteHelper("fullScreen", "A route presented full screen over a stack.")
tab = RouteHelper("tab", "A tab of a tabs coordinator, in display order.")
child = RouteHelper("child", "The one child of a wrapper coordinator.")


def screen(name: str, /, **props: Any) -> Content:
    """Content showing the screen `name` with `props` (what the UI shell maps to a view): `screen("Todo", id=42)`.
    `name` is positional only, so a prop may be called `name` too."""
    content: Dict[str, Any] = {"name": name}
    if props:
        content["props"] = props
    return {"screen": content}


def coordinator(type_name: str, plugin: str | None = None, params: Params | None = None) -> Content:
    """Content opening a coordinator of `type_name` (of `plugin` when it is another plugin's), created with `params`."""
    reference: Dict[str, Any] = {"type": type_name}
    if plugin:
        reference["plugin"] = plugin
    if params is not None:
        reference["params"] = params
    return {"coordinator": reference}


def _fits(value: Any, kind: str) -> bool:
    if kind == "any":
        return True
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float))
    expected = {"string": str, "object": dict, "array": list}.get(kind)
    return expected is not None and isinstance(value, expected)


def check_params(route: RouteDeclaration, params: Params | None) -> None:
    """Params that do not fit the route's declared ones are refused with -32602 naming the param (spec §7): the
    host checks them before it asks, but a plugin must not act on params of the wrong type either."""
    if route.get("params") is None:
        return
    given = params or {}
    for declared in route["params"]:
        name = declared["name"]
        if given.get(name) is None:
            if declared.get("required", True):
                raise RPCError(INVALID_PARAMS, "route '%s' needs param '%s'" % (route["name"], name), {"field": name})
        elif not _fits(given[name], declared.get("type", "any")):
            raise RPCError(INVALID_PARAMS, "route '%s': param '%s' must be %s" % (route["name"], name, declared.get("type")),
                           {"field": name})


def captures(pattern: str) -> List[str]:
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
