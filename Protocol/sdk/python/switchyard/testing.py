"""Exhaustive tests of an app's navigation over a real host (The Composable Architecture's TestStore, for trees).

`AppTest` starts `switchyard run` for a manifest, drives it as a UI shell would (deep links, steps, the user's
dismissals and actions) and makes the test say what became of each: every change of the tree (`expect_tree`, the
tree as an outline; a mismatch fails with a diff) and every notification a plugin received (`expect_received`:
dismissals, tab selections, appearances, destroys). In the default, exhaustive mode a change or a notification the
test did not assert fails it: at the next action, and when the test ends. `exhaustive=False` checks only what the test
asserts.

    from switchyard.testing import AppTest

    def test_sign_in_and_open_a_todo():
        with AppTest("switchyard.json") as app:
            app.navigate([{"op": "setRoot", "route": "authenticated", "params": {"user": "alice"}}])
            app.expect_tree('''
                main.main
                  root authenticated {"user":"alice"} -> authenticated.home
                  ...
            ''')
            app.expect_received("unauthenticated.unauthenticated dismissed login (navigation)", ...)

Failures are `AppTestFailure`, an `AssertionError`: pytest shows them as assertion failures, unittest as failures.
The `switchyard` executable is `switchyard=`, else `$SWITCHYARD`, else the one on the PATH.
"""
from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import threading
import time
from collections import deque
from types import TracebackType
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple, Type, Union

from .client import ControlClient, Timeout

__all__ = ["AppTest", "AppTestFailure", "outline"]

Target = Union[str, int, None]


class AppTestFailure(AssertionError):
    """What an `AppTest` found that the test did not say, or said otherwise."""


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def outline(snapshot: Dict[str, Any]) -> str:
    """The tree as the test writes it: one line per coordinator (`plugin.type`) and per entry (`transition route
    params`, then `-> plugin.type` for a coordinator it holds or `: Screen props`), indented by what holds what. No
    ids and no revision, so an outline stays the same from run to run."""
    nodes = {node["id"]: node for node in snapshot.get("instances", [])}
    lines: List[str] = []

    def visit(node_id: int, depth: int, level: int = 0) -> None:
        node = nodes.get(node_id)
        if node is None or level > 1000:
            return
        state = " (unavailable)" if node.get("status") == "unavailable" else ""
        if depth == 0:
            lines.append("%s.%s%s" % (node["plugin"], node["type"], state))
        entries: List[Tuple[str, Dict[str, Any]]] = []
        if node.get("root"):
            entries.append(("root", node["root"]))
        entries += [(entry["transition"], entry) for entry in node.get("entries") or []]
        for tab in node.get("tabs") or []:
            entries.append(("tab", tab))
        if node.get("child"):
            entries.append(("child", node["child"]))
        for transition, entry in entries:
            text = "%s %s" % (transition, entry["route"])
            if entry.get("params") is not None:
                text += " " + _json(entry["params"])
            if transition == "tab" and node.get("selectedTab") == entry["route"]:
                text += " (selected)"
            if entry.get("badge") is not None:
                text += " [%s]" % entry["badge"]
            content = entry.get("content", {})
            if "coordinator" in content:
                child = nodes.get(content["coordinator"], {})
                text += " -> %s.%s" % (child.get("plugin", "?"), child.get("type", "?"))
                if child.get("status") == "unavailable":
                    text += " (unavailable)"
            elif "screen" in content:
                screen = content["screen"]
                text += ": " + screen["name"] + (" " + _json(screen["props"]) if screen.get("props") else "")
            lines.append("  " * (depth + 1) + text)
            if "coordinator" in content:
                visit(content["coordinator"], depth + 1, level + 1)

    if snapshot.get("root") is not None:
        visit(snapshot["root"], 0)
    return "\n".join(lines)


def _normal(text: str) -> str:
    """An expected outline as written in a test: indentation common to its lines and blank edge lines dropped."""
    return textwrap.dedent(text).strip("\n").rstrip()


def _diff(expected: str, actual: str, expected_name: str, actual_name: str) -> str:
    lines = difflib.unified_diff(expected.splitlines(), actual.splitlines(), expected_name, actual_name, lineterm="")
    return "\n".join(lines)


class AppTest:
    """A real host for one test: `with AppTest("switchyard.json") as app: ...` (see the module's documentation)."""

    def __init__(self, manifest: str, *, exhaustive: bool = True, switchyard: Optional[str] = None,
                 timeout: float = 20.0) -> None:
        self.manifest = manifest
        self.exhaustive = exhaustive
        self.timeout = timeout
        self.executable = switchyard or os.environ.get("SWITCHYARD") or shutil.which("switchyard") or "switchyard"
        self._folder: Optional[str] = None
        self._process: Optional["subprocess.Popen[bytes]"] = None
        self._reader: Optional[threading.Thread] = None
        self._stderr: Deque[str] = deque(maxlen=40)
        self._client: Optional[ControlClient] = None
        #: Changes of the tree not asserted yet: (revision, outline), oldest first.
        self._changes: Deque[Tuple[int, str]] = deque()
        #: Notifications plugins received, not asserted yet, as `expect_received` writes them.
        self._received: Deque[str] = deque()
        #: The tree the test last asserted (or the one it started with) and the latest one.
        self._asserted = ""
        self._latest: Dict[str, Any] = {}
        #: What every instance and entry was, for notifications about ones that have left the tree.
        self._instances: Dict[int, str] = {}
        self._entries: Dict[int, str] = {}

    # -- the host's life --------------------------------------------------------------------------------------------
    def __enter__(self) -> "AppTest":
        self.start()
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        # A test that failed already fails with its own error; one that passed must have asserted everything.
        self.close(check=kind is None)

    def start(self) -> None:
        """Starts the host (its plugins, the tree) and connects to it; returns once the app has started."""
        self._folder = tempfile.mkdtemp(prefix="switchyard-apptest-")
        socket_path = os.path.join(self._folder, "app.sock")
        # The host ends with this process even if the test is killed before it can stop it (the CLI's harness hook).
        environment = dict(os.environ, SWITCHYARD_EXIT_WITH_PARENT=str(os.getpid()))
        self._process = subprocess.Popen(
            [self.executable, "run", "--manifest", self.manifest, "--socket", socket_path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment)
        ready = threading.Event()
        self._reader = threading.Thread(target=self._read_stderr, args=(ready,), daemon=True)
        self._reader.start()
        if not ready.wait(self.timeout):
            self.close(check=False)
            raise AppTestFailure("the host did not start within %.0f s:\n%s" % (self.timeout, self.host_log()))
        if self._process.poll() is not None:
            self.close(check=False)
            raise AppTestFailure("the host could not start the app:\n%s" % self.host_log())
        self._client = ControlClient(socket_path, timeout=self.timeout)
        self._client.call("trace/subscribe", {})
        self._see(self._client.subscribe())
        self._asserted = outline(self._latest)

    def _read_stderr(self, ready: threading.Event) -> None:
        assert self._process is not None and self._process.stderr is not None
        for raw in self._process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self._stderr.append(line)
            if line.startswith("switchyard: ready"):
                ready.set()
        ready.set()

    def host_log(self) -> str:
        """The host's last lines on stderr (its log: plugin failures, tracebacks)."""
        return "\n".join(self._stderr)

    def close(self, check: bool = True) -> None:
        """Stops the host. With `check` (the default; not when the test failed already), a change or a notification
        left unasserted in exhaustive mode fails the test."""
        try:
            if check and self.exhaustive and self._client is not None:
                self._collect()
                self._fail_if_unasserted("the test ended")
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._process is not None:
                if self._process.poll() is None:
                    self._process.terminate()
                    try:
                        self._process.wait(10)
                    except subprocess.TimeoutExpired:
                        self._process.kill()
                        self._process.wait()
                # The host has exited: its stderr ends, and the pipe is closed here, not left to the collector.
                if self._reader is not None:
                    self._reader.join(5)
                    self._reader = None
                if self._process.stderr is not None:
                    self._process.stderr.close()
                self._process = None
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder = None

    # -- what the user does -----------------------------------------------------------------------------------------
    def open(self, url: str, defer: Optional[bool] = None) -> Dict[str, Any]:
        """Opens a deep link (`defer`: it may wait, Protocol/README.md §13.5); returns the host's answer."""
        return self._act("open %s" % url, lambda host: host.open(url, defer=defer))

    def navigate(self, steps: List[Dict[str, Any]], at: Target = None) -> Dict[str, Any]:
        """Applies a chain of steps from `at` (`"plugin.type"`, an instance id, or the root)."""
        return self._act("navigate %s" % _json(steps), lambda host: host.navigate(steps, instance=self.instance(at)))

    def dismiss(self, at: Target, entry: Optional[int] = None) -> Dict[str, Any]:
        """The user dismisses `entry` of `at` (default: the top-most entry it shows), as a swipe or a dragged sheet."""
        instance = self._required(at)
        chosen = entry if entry is not None else self._top_entry(instance)
        return self._act("dismiss e%d" % chosen, lambda host: host.dismissed(instance, chosen))

    def action(self, at: Target, action: str, params: Optional[Dict[str, Any]] = None,
               entry: Optional[int] = None) -> Dict[str, Any]:
        """The user does `action` on the screen of `entry` of `at` (default: its top-most entry)."""
        instance = self._required(at)
        chosen = entry if entry is not None else self._top_entry(instance)
        request: Dict[str, Any] = {"instance": instance, "entry": chosen, "action": action}
        if params is not None:
            request["params"] = params

        def send(host: ControlClient) -> Dict[str, Any]:
            answer: Dict[str, Any] = host.call("user/action", request)
            return answer
        return self._act("action %s" % action, send)

    def instance(self, at: Target) -> Optional[int]:
        """An instance id: `at` itself, the first instance of `"plugin.type"` (depth-first), or None (the root)."""
        if at is None or isinstance(at, int):
            return at
        plugin, _, type_name = at.partition(".")
        for node in self._latest.get("instances", []):
            if node["plugin"] == plugin and node["type"] == type_name:
                return int(node["id"])
        raise AppTestFailure("no instance of %s in the tree:\n%s" % (at, outline(self._latest)))

    def _required(self, at: Target) -> int:
        instance = self.instance(at)
        if instance is None:
            raise AppTestFailure("name the coordinator: 'plugin.type' or an instance id")
        return instance

    # -- what the test says -----------------------------------------------------------------------------------------
    def expect_tree(self, expected: str) -> None:
        """The tree after the next change the test has not asserted (waiting for it, for a change a plugin makes on its
        own) is `expected`, an outline (see `outline`). Not exhaustive: the latest tree, once it is `expected`."""
        wanted = _normal(expected)
        if not self.exhaustive:
            self._wait_until(lambda: outline(self._latest) == wanted)
            actual = outline(self._latest)
            self._changes.clear()
        else:
            self._wait_until(lambda: bool(self._changes))
            if not self._changes:
                raise AppTestFailure(
                    "expected a change of the tree, but none came within %.0f s; the tree is:\n%s"
                    % (self.timeout, outline(self._latest)))
            actual = self._changes.popleft()[1]
        if actual != wanted:
            raise AppTestFailure(
                "the tree is not as expected (- expected, + actual):\n%s\n\nwhat changed (- before, + after):\n%s"
                % (_diff(wanted, actual, "expected", "actual"), _diff(self._asserted, actual, "before", "after")))
        self._asserted = actual

    def expect_received(self, *notifications: str) -> None:
        """The plugins received these notifications next, in order: `"plugin.type dismissed ROUTE (REASON)"`,
        `"plugin.type tabSelected TAB"` (`again` after a re-tap), `"plugin.type appeared ROUTE"`, `"plugin.type
        destroyed"`. Not exhaustive: these, in this order, among what they received."""
        self._wait_until(lambda: len(self._received) >= len(notifications))
        received = list(self._received)
        if self.exhaustive:
            if received[:len(notifications)] != list(notifications):
                raise AppTestFailure(
                    "the plugins received other notifications (- expected, + received):\n%s"
                    % _diff("\n".join(notifications), "\n".join(received), "expected", "received"))
            for _ in notifications:
                self._received.popleft()
            return
        position = 0
        for wanted in notifications:
            while position < len(received) and received[position] != wanted:
                position += 1
            if position == len(received):
                raise AppTestFailure("the plugins did not receive %r; they received:\n%s" % (wanted, "\n".join(received)))
            position += 1
        for _ in range(position):
            self._received.popleft()

    def skip_received(self) -> None:
        """Forgets the notifications not asserted so far (TCA's `skipReceivedActions`)."""
        self._collect()
        self._received.clear()

    def tree(self) -> str:
        """The current tree's outline: what to paste into `expect_tree` (check it first)."""
        self._collect()
        return outline(self._latest)

    # -- inside -----------------------------------------------------------------------------------------------------
    def _act(self, what: str, call: Callable[[ControlClient], Dict[str, Any]]) -> Dict[str, Any]:
        self._collect()
        if self.exhaustive:
            self._fail_if_unasserted("before %s" % what)
        assert self._client is not None
        result: Dict[str, Any] = call(self._client)
        self._collect()
        return result

    def _fail_if_unasserted(self, when: str) -> None:
        problems: List[str] = []
        if self._changes:
            actual = self._changes[-1][1]
            problems.append("%d change(s) of the tree not asserted (- last asserted, + now):\n%s"
                            % (len(self._changes), _diff(self._asserted, actual, "asserted", "now")))
        if self._received:
            problems.append("notifications the plugins received, not asserted:\n" + "\n".join(self._received))
        if problems:
            raise AppTestFailure("%s, %s" % (when, "\n\n".join(problems)))

    def _wait_until(self, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.timeout
        self._collect()
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._read_one(remaining):
                return

    def _collect(self) -> None:
        """Takes in every notification the host has sent so far (those the client holds, then what the socket has)."""
        assert self._client is not None
        while self._client._notifications:
            notification = self._client._notifications.popleft()
            self._take(notification.method, notification.params)
        while self._read_one(0.001):
            pass

    def _read_one(self, timeout: float) -> bool:
        assert self._client is not None
        try:
            notification = self._client.next_notification(timeout=timeout)
        except Timeout:
            return False
        self._take(notification.method, notification.params)
        return True

    def _take(self, method: str, params: Dict[str, Any]) -> None:
        if method == "tree/changed" and "snapshot" in params:
            self._see(params["snapshot"])
            self._changes.append((int(params["revision"]), outline(self._latest)))
        elif method == "trace/event":
            self._trace(params)

    def _see(self, snapshot: Dict[str, Any]) -> None:
        self._latest = snapshot
        for node in snapshot.get("instances", []):
            self._instances[node["id"]] = "%s.%s" % (node["plugin"], node["type"])
            for key in ("root", "child"):
                if node.get(key):
                    self._entries[node[key]["entry"]] = node[key]["route"]
            for entry in (node.get("entries") or []) + (node.get("tabs") or []):
                self._entries[entry["entry"]] = entry["route"]

    def _trace(self, record: Dict[str, Any]) -> None:
        message = record.get("message")
        if record.get("direction") != "out" or not isinstance(message, dict):
            return
        params = message.get("params") or {}
        who = self._instances.get(params.get("instance", -1), "#%s" % params.get("instance"))
        method = message.get("method")
        if method == "coordinator/dismissed":
            self._received.append("%s dismissed %s (%s)" % (who, params.get("route"), params.get("reason")))
        elif method == "coordinator/tabSelected":
            self._received.append("%s tabSelected %s%s" % (who, params.get("tab"), " again" if params.get("isRepeat") else ""))
        elif method == "coordinator/appeared":
            self._received.append("%s appeared %s" % (who, self._entries.get(params.get("entry", -1), "?")))
        elif method == "coordinator/destroy":
            self._received.append("%s destroyed" % who)

    def _top_entry(self, instance: int) -> int:
        node = next((n for n in self._latest.get("instances", []) if n["id"] == instance), None)
        if node is None:
            raise AppTestFailure("no instance %d in the tree" % instance)
        entries: Sequence[Dict[str, Any]] = node.get("entries") or []
        top = entries[-1] if entries else node.get("root") or node.get("child")
        if node.get("tabs"):
            top = next(tab for tab in node["tabs"] if tab["route"] == node.get("selectedTab"))
        if not top:
            raise AppTestFailure("instance %d shows no entry" % instance)
        return int(top["entry"])

