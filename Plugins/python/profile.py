#!/usr/bin/env python3
"""The profile tab: an overview, settings pushed, and a sign-out confirmation presented modally. Its appearance
hook is `async def`: it awaits the host's answer to a question about the tree."""
import sys

import switchyard
from switchyard import screen

plugin = switchyard.Plugin("profile", "1.0.0")


@plugin.coordinator
class Profile(switchyard.Coordinator):
    type_name = "profile"
    initial = "overview"
    routes = [
        switchyard.root("overview"),
        # The settings screen's "save" button: the coordinator decides what follows (spec §12.6).
        switchyard.push("settings", deep_link="settings",
                        actions=[{"name": "save", "params": [{"name": "theme", "type": "string", "required": False}]}]),
        switchyard.modal("signOut", deep_link="sign-out"),
        # A half-height sheet the user cannot swipe away: only its own buttons end it (spec §12.8).
        switchyard.modal("deleteAccount", presentation={"detents": ["medium"], "interactiveDismissDisabled": True}),
    ]

    def overview(self, params, link):
        return screen("Profile")

    def settings(self, params, link):
        return screen("Settings")

    def signOut(self, params, link):
        return screen("ConfirmSignOut")

    def deleteAccount(self, params, link):
        return screen("ConfirmDeleteAccount")

    def action(self, name, params, route, entry):
        if name == "save":
            sys.stderr.write("profile: settings saved (%s)\n" % (params or {}).get("theme", "default"))
            return [{"op": "pop", "entry": entry}]
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
