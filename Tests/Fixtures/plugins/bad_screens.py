#!/usr/bin/env python3
"""A plugin whose screens a shell could not show, for the tests of what the host and check-plugin refuse (spec §21.3).

- `home` (the root) is a fine list whose rows open `detail` and `huge` (actions the route declares).
- `detail` answers a screen whose button names `delete`, an action its route does not declare: -32006 naming
  `content[1].action.name`.
- `huge` answers a list of 1,001 rows, over `maxScreenElements`: -32004 naming the limit.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402
from switchyard import ui  # noqa: E402

plugin = switchyard.Plugin("screens", "1.0.0")


@plugin.coordinator
class Screens(switchyard.Coordinator):
    type_name = "screens"
    initial = "home"
    routes = [
        switchyard.root("home", actions=[{"name": "open", "params": [{"name": "route", "type": "string"}]}]),
        switchyard.push("detail", deep_link="detail", actions=["complete"]),
        switchyard.push("huge", deep_link="huge"),
    ]

    def home(self, params, link):
        return ui.screen("Home", title="Screens", content=[ui.list(
            ui.row("Detail", action=ui.action("open", {"route": "detail"})),
            ui.row("Huge", action=ui.action("open", {"route": "huge"})),
        )])

    def detail(self, params, link):
        return ui.screen("Detail", content=[
            ui.button("Complete", ui.action("complete"), style="primary"),
            ui.button("Delete", ui.action("delete"), style="destructive"),
        ])

    def huge(self, params, link):
        return ui.screen("Huge", content=[ui.list(*[ui.row("row %d" % index) for index in range(1001)])])

    def action(self, name, params, route, entry):
        if name == "open":
            return [{"op": "route", "route": params["route"]}]
        return None


if __name__ == "__main__":
    plugin.run()
