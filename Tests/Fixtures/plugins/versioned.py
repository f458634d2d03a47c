#!/usr/bin/env python3
"""A plugin in several versions, for the tests of upgrades, reloads, lazy start and hibernation (spec §20).

One type, `notes` (a stack): a `home` root, a pushed `note` (`note/:id`) and a pushed `extra`. Every route it shows
counts itself in the instance's state, so a test sees that state survive. Flags make the versions:

  --version V        the version it reports (default 1.0.0)
  --without ROUTE    leaves ROUTE out of its table (a breaking change if the tree uses it)
  --rename-state     its state names the count `total` instead of `count`, and it migrates states written before;
                     without it, a state a later version wrote with `total` is migrated back (a rollback)
  --fail-migrate     refuses to migrate (an upgrade to it rolls back)
  --crash-on ROUTE   exits with status 3 when asked to show ROUTE (a crash after the switch, when the test wants it)
  --state-bytes N    pads each instance's state to about N bytes (hibernation's bound)
  --opens PLUGIN     its `extra` route opens PLUGIN's `notes` instead of showing a screen
  --crash-on-restore exits with status 5 when asked to restore an instance (a restore that crashes)
  --block-on FIFO    the `note` route with id "block" answers only once a line can be read from FIFO (a request in
                     flight for as long as the test wants)
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Protocol", "sdk", "python"))
import switchyard  # noqa: E402
from switchyard import coordinator, screen  # noqa: E402


def option(flag, default=None):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv[:-1] else default


VERSION = option("--version", "1.0.0")
WITHOUT = {sys.argv[i + 1] for i, arg in enumerate(sys.argv[:-1]) if arg == "--without"}
RENAME = "--rename-state" in sys.argv
FAIL_MIGRATE = "--fail-migrate" in sys.argv
CRASH_ON = option("--crash-on")
STATE_BYTES = int(option("--state-bytes", "0"))
OPENS = option("--opens")
BLOCK_ON = option("--block-on")
COUNT = "total" if RENAME else "count"

plugin = switchyard.Plugin("versioned", VERSION)


def crash_if_asked(route):
    if route == CRASH_ON:
        os._exit(3)

extra = switchyard.push("extra", deep_link="extra", target="notes", plugin=OPENS) if OPENS else \
    switchyard.push("extra", deep_link="extra")
ROUTES = [switchyard.root("home"), switchyard.push("note", deep_link="note/:id", params=["id"]), extra]


@plugin.coordinator
class Notes(switchyard.Coordinator):
    type_name = "notes"
    initial = "home"
    routes = [route for route in ROUTES if route["name"] not in WITHOUT]

    def home(self, params, link):
        self.count()
        return screen("Home", version=VERSION)

    def note(self, params, link):
        crash_if_asked("note")
        if BLOCK_ON and params["id"] == "block":
            return self.blocked(params)
        self.count()
        return screen("Note", id=params["id"], version=VERSION)

    async def blocked(self, params):
        print("note 'block' waits for its FIFO", file=sys.stderr, flush=True)

        def wait():
            with open(BLOCK_ON) as fifo:
                fifo.readline()
        await asyncio.get_running_loop().run_in_executor(None, wait)
        self.count()
        return screen("Note", id=params["id"], version=VERSION)

    def extra(self, params, link):
        crash_if_asked("extra")
        self.count()
        return coordinator("notes", plugin=OPENS) if OPENS else screen("Extra", version=VERSION)

    def count(self):
        state = dict(self.state or {})
        state[COUNT] = state.get(COUNT, 0) + 1
        if STATE_BYTES:
            state["padding"] = "x" * STATE_BYTES
        self.state = state

    def migrate(self, from_version, state):
        if FAIL_MIGRATE:
            raise ValueError("version %s cannot read the state of version %s" % (VERSION, from_version))
        # A later version names the count `total`; a rollback to an earlier one names it back.
        old, new = ("count", "total") if RENAME else ("total", "count")
        if isinstance(state, dict) and old in state:
            state = dict(state)
            state[new] = state.pop(old)
        return state


if "--crash-on-restore" in sys.argv:
    create = plugin.handlers["coordinator/create"]

    def crash_on_restore(params):
        if params.get("reason") == "restore":
            os._exit(5)
        return create(params)
    plugin.handlers["coordinator/create"] = crash_on_restore

plugin.run()
