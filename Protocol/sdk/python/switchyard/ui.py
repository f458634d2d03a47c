"""Screens as data (Protocol/README.md §21): plain functions that build a screen's title and content, which a generic
shell (the Switchyard Studio) renders as an app. Every interactive element names an action its route declares
(`actions=` on the route); a tap sends it as `user/action` and the coordinator's `action()` decides what follows.

    from switchyard import ui

    def login(self, params, link):
        return ui.screen("Login", title="Sign in", content=[
            ui.text_field("user", label="User", placeholder="alice"),
            ui.secure_field("password", label="Password"),
            ui.button("Sign in", ui.action("signIn", inputs=["user", "password"]), style="primary"),
        ])

The host checks the content against the route's declared actions and the vocabulary before the screen is shown, and
refuses it with an error naming the element (`content[2].action.name`)."""
from __future__ import annotations

import builtins
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

from .declarations import Content

__all__ = [
    "Element", "Row", "Section", "Action", "screen", "action", "text", "list", "section", "row", "button",
    "text_field", "secure_field", "toggle", "picker", "divider", "spacer", "symbol", "tab_item",
]

#: One element of a screen's content: `{"type": "text", "text": ...}` (make it with the functions here).
Element = Dict[str, Any]
#: A row of a list section.
Row = Dict[str, Any]
#: A section of a list: `{"header"?, "footer"?, "rows": [...]}`.
Section = Dict[str, Any]
#: What a tap sends: `{"name", "params"?, "inputs"?}`.
Action = Dict[str, Any]


def _with(base: Dict[str, Any], **optional: Any) -> Dict[str, Any]:
    """`base` with the members of `optional` that are not None."""
    for key, value in optional.items():
        if value is not None:
            base[key] = value
    return base


def screen(name: str, /, *, title: Optional[str] = None, content: Iterable[Element] = (),
           props: Optional[Mapping[str, Any]] = None) -> Content:
    """A screen drawn from data: `name` (what a shell maps to a view), the navigation bar's `title`, its `content`
    (elements top to bottom) and `props`."""
    shown: Dict[str, Any] = {"name": name}
    if props:
        shown["props"] = dict(props)
    if title is not None:
        shown["title"] = title
    shown["content"] = builtins.list(content)
    return {"screen": shown}


def action(name: str, /, params: Optional[Mapping[str, Any]] = None, *, inputs: Sequence[str] = ()) -> Action:
    """What a tap sends: the declared action `name`, its fixed `params`, and the values of the screen's `inputs`
    (their ids), each as the param of that name."""
    sent: Action = {"name": name}
    if params:
        sent["params"] = dict(params)
    if inputs:
        sent["inputs"] = builtins.list(inputs)
    return sent


def text(value: str, /, style: Optional[str] = None) -> Element:
    """Text; `style` is `title`, `headline`, `body` (the default) or `caption`."""
    return _with({"type": "text", "text": value}, style=style)


def list(*items: Union[Row, Section]) -> Element:  # noqa: A001 - the vocabulary's name, used as `ui.list`
    """A grouped list of `section()`s; rows given outside a section make a section of their own."""
    sections: builtins.list[Section] = []
    loose: builtins.list[Row] = []
    for item in items:
        if "rows" in item:
            if loose:
                sections.append({"rows": loose})
                loose = []
            sections.append(item)
        else:
            loose.append(item)
    if loose:
        sections.append({"rows": loose})
    return {"type": "list", "sections": sections}


def section(*rows: Row, header: Optional[str] = None, footer: Optional[str] = None) -> Section:
    """A section of a list: `rows` under an optional `header`, with an optional `footer`."""
    return _with({"rows": builtins.list(rows)}, header=header, footer=footer)


def row(title: str, /, *, subtitle: Optional[str] = None, detail: Optional[str] = None, badge: Optional[str] = None,
        symbol: Optional[str] = None, disclosure: Optional[bool] = None, action: Optional[Action] = None) -> Row:
    """A row: `title`, `subtitle` under it, `detail` at its trailing edge, a `badge`, a leading `symbol`, and the
    `action` a tap sends (a row with an action shows a chevron unless `disclosure=False`)."""
    return _with({"title": title}, subtitle=subtitle, detail=detail, badge=badge, symbol=symbol,
                 disclosure=disclosure, action=action)


def button(title: str, action: Action, /, *, style: Optional[str] = None, symbol: Optional[str] = None) -> Element:
    """A button sending `action`; `style` is `primary`, `destructive` or `plain` (the default)."""
    return _with({"type": "button", "title": title, "action": action}, style=style, symbol=symbol)


def text_field(id: str, /, *, label: Optional[str] = None, placeholder: Optional[str] = None,
               value: Optional[str] = None) -> Element:
    """A one-line text input; an action listing `id` in its inputs sends the text."""
    return _with({"type": "textField", "id": id}, label=label, placeholder=placeholder, value=value)


def secure_field(id: str, /, *, label: Optional[str] = None, placeholder: Optional[str] = None) -> Element:
    """A text input whose text is not shown (a password)."""
    return _with({"type": "secureField", "id": id}, label=label, placeholder=placeholder)


def toggle(id: str, label: str, /, *, value: bool = False) -> Element:
    """A switch; an action listing `id` sends `True` or `False`."""
    return {"type": "toggle", "id": id, "label": label, "value": value}


def picker(id: str, label: str, options: Sequence[Union[str, Tuple[str, str], Mapping[str, str]]], /, *,
           value: Optional[str] = None) -> Element:
    """A choice among `options` (values, `(value, title)` pairs or `{"value", "title"}`); an action listing `id` sends
    the chosen value."""
    choices: builtins.list[Dict[str, str]] = []
    for option in options:
        if isinstance(option, str):
            choices.append({"value": option, "title": option})
        elif isinstance(option, tuple):
            choices.append({"value": option[0], "title": option[1]})
        else:
            choices.append({"value": option["value"], "title": option["title"]})
    return _with({"type": "picker", "id": id, "label": label, "options": choices}, value=value)


def divider() -> Element:
    """A thin line."""
    return {"type": "divider"}


def spacer() -> Element:
    """Flexible space."""
    return {"type": "spacer"}


def symbol(name: str, /) -> Element:
    """A symbol of the documented set (`checkmark.circle`)."""
    return {"type": "symbol", "name": name}


def tab_item(title: str, /, *, symbol: Optional[str] = None, badge: Optional[str] = None) -> Dict[str, Any]:
    """What the tab bar shows for a tab route: `tab("todos", tab_item=ui.tab_item("Todos", symbol="checklist"))`."""
    return _with({"title": title}, symbol=symbol, badge=badge)


