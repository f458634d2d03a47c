#!/usr/bin/env python3
"""A tab bar that starts with one of its three tabs (spec §12.7) and hears when a tab shows again (§12.9)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402
from switchyard import screen  # noqa: E402

plugin = switchyard.Plugin("bar", "1.0.0")


@plugin.coordinator
class Bar(switchyard.Coordinator):
    type_name = "bar"
    kind = "tabs"
    routes = [switchyard.tab("a"), switchyard.tab("b"), switchyard.tab("c")]

    def initial_tabs(self):
        return ["b"]

    def a(self, params, link):
        return screen("A")

    def b(self, params, link):
        return screen("B")

    def c(self, params, link):
        return screen("C")

    def appeared(self, entry):
        sys.stderr.write("bar: entry %s appeared\n" % entry)


if __name__ == "__main__":
    plugin.run()
