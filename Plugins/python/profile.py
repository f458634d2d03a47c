#!/usr/bin/env python3
"""The profile tab: an overview, settings pushed, and a sign-out confirmation presented modally. Its screens are data
(spec §21): Sign out asks for confirmation, and confirming asks Main (another plugin, an ancestor) to switch to the
signed-out root. Its appearance hook is `async def`: it awaits the host's answer to a question about the tree."""
import sys

import switchyard
from switchyard import ui

plugin = switchyard.Plugin("profile", "1.0.0")

THEMES = [("system", "System"), ("light", "Light"), ("dark", "Dark")]


@plugin.coordinator
class Profile(switchyard.Coordinator):
    type_name = "profile"
    initial = "overview"
    routes = [
        switchyard.root("overview", actions=["settings", "signOut", "deleteAccount"]),
        # The settings screen's "save" button: the coordinator decides what follows (spec §12.6).
        switchyard.push("settings", deep_link="settings",
                        actions=[{"name": "save", "params": [{"name": "theme", "type": "string", "required": False}]}]),
        switchyard.modal("signOut", deep_link="sign-out", actions=["confirm", "cancel"]),
        # A half-height sheet the user cannot swipe away: only its own buttons end it (spec §12.8).
        switchyard.modal("deleteAccount", presentation={"detents": ["medium"], "interactiveDismissDisabled": True},
                         actions=["keep"]),
    ]

    def overview(self, params, link):
        return ui.screen("Profile", title="Profile", content=[
            ui.symbol("person.crop.circle"),
            ui.text("Your profile", style="title"),
            ui.text("Written in Python: this tab is a plugin of its own.", style="caption"),
            ui.list(
                ui.section(ui.row("Settings", symbol="gearshape", action=ui.action("settings"))),
                ui.section(ui.row("Delete account", symbol="trash", action=ui.action("deleteAccount"))),
            ),
            ui.button("Sign out", ui.action("signOut"), style="destructive",
                      symbol="rectangle.portrait.and.arrow.right"),
        ])

    def settings(self, params, link):
        return ui.screen("Settings", title="Settings", content=[
            ui.picker("theme", "Theme", THEMES, value="system"),
            ui.button("Save", ui.action("save", inputs=["theme"]), style="primary"),
        ])

    def signOut(self, params, link):
        return ui.screen("ConfirmSignOut", title="Sign out", content=[
            ui.text("Sign out?", style="headline"),
            ui.text("You can sign in again at any time; your todos stay where they are."),
            ui.button("Sign out", ui.action("confirm"), style="destructive"),
            ui.button("Cancel", ui.action("cancel")),
        ])

    def deleteAccount(self, params, link):
        return ui.screen("ConfirmDeleteAccount", title="Delete account", content=[
            ui.symbol("exclamationmark.triangle"),
            ui.text("Accounts of this demo cannot be deleted.", style="headline"),
            ui.button("Keep my account", ui.action("keep"), style="primary"),
        ])

    def action(self, name, params, route, entry):
        if name == "save":
            sys.stderr.write("profile: settings saved (%s)\n" % (params or {}).get("theme", "default"))
            return [{"op": "pop", "entry": entry}]
        if name in ("settings", "signOut", "deleteAccount"):
            return [{"op": "route", "route": name}]
        if name in ("cancel", "keep"):
            return [{"op": "dismiss"}]
        if name == "confirm":
            # profile -> the tab bar (authenticated) -> Main: Main's signed-out root replaces the signed-in one.
            return [{"op": "parent"}, {"op": "parent"}, {"op": "setRoot", "route": "unauthenticated"}]
        return None

    async def appeared(self, entry):
        # What a profile screen would refresh on (spec §12.9): the overview after settings, a sheet gone.
        sys.stderr.write("profile: entry %s appeared\n" % entry)
        # A question the tree answers (spec §12.4): is there anything presented over the profile? A notification
        # handler answers nothing, so it may await the host's answer (a route method must answer first).
        presented = await self.query("presentedCount")
        sys.stderr.write("profile: %s presented\n" % presented)

    def dismissed(self, route, entry, reason):
        sys.stderr.write("profile: %s dismissed by %s\n" % (route, reason))


if __name__ == "__main__":
    plugin.run()
