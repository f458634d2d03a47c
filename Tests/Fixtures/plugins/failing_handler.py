#!/usr/bin/env python3
"""A plugin whose handlers fail, for the tests of what an author sees of a failure.

- `broken` raises a KeyError after writing a line to stderr (as a plugin that logs what it does would): the host
  answers `internalError` with that line in `error.data.stderr`, and the CLI prints it under the error.
- `reported` answers `internalError` with a `traceback` in `error.data`, as the SDKs do for a handler's exception:
  the host keeps it, adds the stderr lines beside it, and the CLI prints both.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402
from switchyard import screen  # noqa: E402

plugin = switchyard.Plugin("failing", "1.0.0")


@plugin.coordinator
class Failing(switchyard.Coordinator):
    type_name = "failing"
    initial = "home"
    routes = [
        switchyard.root("home"),
        switchyard.push("broken", deep_link="broken/:id", params=["id"]),
        switchyard.push("reported", deep_link="reported"),
    ]

    def home(self, params, link):
        return screen("Home")

    def broken(self, params, link):
        sys.stderr.write("failing: looking up item %s\n" % params["id"])
        sys.stderr.flush()
        return screen("Item", title=ITEMS[params["idd"]])  # the bug: 'idd'

    def reported(self, params, link):
        sys.stderr.write("failing: about to report a failure\n")
        sys.stderr.flush()
        raise switchyard.RPCError(switchyard.INTERNAL_ERROR, "ValueError: no report today", {
            "traceback": "Traceback (most recent call last):\n  File \"failing_handler.py\", line 1, in reported\n"
                         "ValueError: no report today\n",
            "hint": "kept as the plugin sent it",
        })


ITEMS = {"1": "One"}

if __name__ == "__main__":
    plugin.run()
