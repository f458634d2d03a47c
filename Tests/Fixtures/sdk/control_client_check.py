"""Drives a fresh demo host (`switchyard run`) through the installed Python control client; run by
SDKPackageTests. Exits non-zero with what went wrong at the first failed check.

usage: control_client_check.py SOCKET EXPECTED_DEFAULT_SOCKET_PATH
"""
import sys

from switchyard import ErrorCode
from switchyard.client import (ConnectionFailed, ControlClient, InvalidRequest, ProtocolViolation, ResponseError, apply_tree_change,
                               default_socket_path, step)

socket_path, expected_default = sys.argv[1], sys.argv[2]


def check(condition, what, got=None):
    if not condition:
        sys.stderr.write("FAILED: %s (got %r)\n" % (what, got))
        sys.exit(1)
    print("ok: %s" % what)


def expect_error(name, call):
    try:
        call()
    except ResponseError as error:
        return error
    sys.stderr.write("FAILED: expected %s, the call succeeded\n" % name)
    sys.exit(1)


def instance(tree, plugin, type_name):
    return next(i for i in tree["instances"] if i["plugin"] == plugin and i["type"] == type_name)


check(default_socket_path("demo") == expected_default, "the default path is the host's", default_socket_path("demo"))
try:
    ControlClient(socket_path + ".missing")
    check(False, "nothing listening: connecting fails")
except ConnectionFailed as error:
    check("is `switchyard run` running?" in str(error), "nothing listening: a connection failure with the hint", str(error))

with ControlClient(socket_path, timeout=20) as host:
    snapshot = host.subscribe()
    check(snapshot["revision"] == 1 and snapshot["instances"][0]["plugin"] == "main", "subscribe: the current snapshot",
          snapshot["revision"])
    watcher = ControlClient(socket_path, timeout=20)
    held = watcher.subscribe(deltas=True)
    check(held == snapshot, "subscribe(deltas=True): the current snapshot", held["revision"])
    follower = ControlClient(socket_path, timeout=20)
    follower.subscribe(deltas=True)

    valid = host.validate("switchyard://forgot?email=a@b.c")
    check(valid["valid"] and valid["steps"][-1]["route"] == "forgotPassword", "validate: a valid link and its steps", valid)
    invalid = host.validate("switchyard://todos/todo/42")
    check(not invalid["valid"] and invalid["error"]["code"] == -32014, "validate: an invalid link and why", invalid)

    opened = host.open("switchyard://forgot?email=a@b.c")
    check(opened["revision"] == 2, "open: applied as revision 2", opened)
    changed = host.next_notification("tree/changed")
    check(changed.params["revision"] == 2 and changed.params["snapshot"]["revision"] == 2,
          "subscribe: tree/changed with its snapshot", changed)
    error = expect_error("deepLinkInvalid", lambda: host.open("switchyard://todos/todo/42"))
    check(error.code == -32014 and error.name == "deepLinkInvalid" and error.data["segment"] == "todos",
          "open: a typed error with code, name and data", (error.code, error.name, error.data))
    # Opened with defer, the same link waits for the authenticated root (§13.5); cancelled, it is gone.
    waiting = host.open("switchyard://todos/todo/42", defer=True, defer_ms=60000)
    check(waiting["revision"] == 2 and waiting["deferred"]["until"] == {"root": "authenticated", "instance": 1}
          and waiting["deferred"]["deferMs"] == 60000, "open(defer=True): the link waits for the authenticated root", waiting)
    pending = host.next_notification("deepLink/changed").params
    check(pending["state"] == "pending" and pending["link"] == waiting["deferred"], "deepLink/changed: pending", pending)
    check(host.pending_deep_link() == waiting["deferred"], "pending_deep_link: the link waiting")
    check(host.cancel_deep_link(waiting["deferred"]["id"]) == waiting["deferred"], "cancel_deep_link: the link dropped")
    check(host.pending_deep_link() is None and host.cancel_deep_link() is None, "nothing waits any more")

    login = host.navigate([step("setRoot", "authenticated", params={"user": "alice"})])
    check(login["revision"] == 3, "navigate: a chain applied as revision 3", login)
    check(host.next_notification("tree/changed").params["revision"] == 3, "subscribe: the chain's change")
    error = expect_error("routeNotFound", lambda: host.navigate([step("route", "nowhere")], instance=1))
    check(error.name == "routeNotFound", "navigate: a typed error", str(error))

    host.open("switchyard://todos/todo/42")
    todos = instance(host.tree(), "todos", "todos")
    check([e["route"] for e in todos["entries"]] == ["todo"], "tree: the opened entry", todos["entries"])
    check(host.query("currentRoute", instance=todos["id"]) == "todo", "query: the top route")
    dismissed = host.dismissed(todos["id"], todos["entries"][0]["entry"])
    check(dismissed["revision"] == 5, "dismissed: the user's dismissal is a revision", dismissed)
    check(instance(host.tree(), "todos", "todos")["entries"] == [], "dismissed: the entry is gone")

    final = host.tree()
    first = watcher.next_notification("tree/changed").params
    check(first["base"] == held["revision"] and "patch" in first and "snapshot" not in first,
          "deltas: tree/changed carries a patch against the held revision", first)
    held = apply_tree_change(held, first)
    while held["revision"] < final["revision"]:
        held = apply_tree_change(held, watcher.next_notification("tree/changed").params)
    check(held == final, "deltas: the patched tree equals tree/get", held["revision"])
    followed = follower.next_tree()
    while followed["revision"] < final["revision"]:
        followed = follower.next_tree()
    check(followed == final, "deltas: next_tree() ends with the tree of tree/get", followed["revision"])
    for index in ("-1", "+1", "01"):
        try:
            apply_tree_change(final, {"revision": final["revision"] + 1, "base": final["revision"],
                                      "patch": [{"op": "remove", "path": "/instances/" + index}]})
            check(False, "a patch that removes /instances/%s is refused (RFC 6901 indices are digits)" % index)
        except ProtocolViolation as error:
            check("not an array index" in str(error), "a patch that removes /instances/%s is refused" % index, str(error))
    watcher.close()
    follower.close()

    status = host.status()
    check(status["revision"] == 5, "status: the revision", status["revision"])
    check(sorted(p["name"] for p in status["plugins"]) ==
          ["authenticated", "main", "profile", "projects", "todos", "unauthenticated"]
          and all(p["state"] == "ready" and p["pid"] > 0 for p in status["plugins"]),
          "status: every plugin ready with a pid", status["plugins"])
    started = host.start_plugin("todos")
    check(started["name"] == "todos" and started["state"] == "ready", "start_plugin: a plugin that serves is left alone", started)
    error = expect_error("invalidParams", lambda: host.start_plugin("nope"))
    check(error.code == -32602, "start_plugin: a name the manifest does not have", str(error))
    check(host.render("mermaid")["text"].startswith("flowchart"), "render: mermaid")
    check(host.ping() == {} and host.unsubscribe() == {}, "ping and unsubscribe")
    error = expect_error("methodNotFound", lambda: host.call("no/such/method"))
    check(error.code == -32601 and error.code is ErrorCode.METHOD_NOT_FOUND, "an unknown method: methodNotFound, an ErrorCode",
          repr(error.code))
    # NaN is not JSON (RFC 8259): the request is not sent, the error names the field, the connection stays usable.
    try:
        host.navigate([step("route", "todo", params={"score": float("nan")})])
        check(False, "navigate with a NaN: refused before it is sent")
    except InvalidRequest as refused:
        check(refused.field == "params.steps[0].params.score" and "NaN" in refused.message,
              "navigate with a NaN: InvalidRequest naming the field", (refused.field, refused.message))
    check(host.ping() == {}, "the connection is usable after a refused NaN")
    check(host.shutdown() == {}, "shutdown: accepted")
