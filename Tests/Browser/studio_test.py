#!/usr/bin/env python3
"""Drives the Switchyard Studio in a real headless Chromium (Selenium) and checks what the page shows against the host.

Run by Tests/SwitchyardHostTests/StudioTests.swift, which starts the host and the studio and ends them. Scenarios:

  walk      the acceptance walk on the demo app (`switchyard run --studio --allow-faults --trace FILE`): sign in through
            the login screen's routes, a deep link in the address bar, tabs and a re-tap, a modal dismissed with its
            control (the plugin hears reason user), back; after each step the page is compared with
            `switchyard tree --format json`. Then SIGKILL from the fault button: the plugin's nodes go unavailable and
            come back. The traffic pane shows the exact lines of a route request and its answer for a Python and a Swift
            plugin. Screenshots go to --screenshots when given.
  sync      two tabs on one host stay in sync; fault buttons are off without --allow-faults; the host going away shows
            "disconnected", and the page reconnects when a host is back on the socket.
  security  (no browser) from outside: no token or a wrong one is 403, so is another Host; a WebSocket upgrade from
            another Origin or without the token is refused; the port is bound on 127.0.0.1 only; the relay refuses
            fault methods without --allow-faults and never relays host/shutdown.
  slow      (no browser) a page that subscribes and never reads while the tree changes fast: the host answers every
            request, and drops that client once its bounded queue is full; a page that vanishes: the studio closes its
            control connection (the host's descriptors come back to where they were).
  large     (no browser; a studio started with a tiny --max-pending-bytes) lines from the host larger than the relay's
            backlog limit reach the page: the tree/subscribe answer, and a tree/changed of a few hundred kilobytes.

Any console error (level SEVERE) in the page fails the run. Every wait is bounded and says what it waited for; the
whole run has a deadline (SIGALRM), and Chromium is always quit.
"""
import argparse
import base64
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

# Selenium is imported by the browser scenarios only (see load_selenium): the others run on any Python.
webdriver = Service = By = Keys = None

WAIT = 20.0


class Failure(Exception):
    pass


def load_selenium():
    global webdriver, Service, By, Keys
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=["walk", "sync", "security", "slow", "large"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--switchyard", required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--trace")
    parser.add_argument("--manifest")
    parser.add_argument("--screenshots")
    parser.add_argument("--deadline", type=int, default=240)
    return parser.parse_args()


def switchyard(args, *arguments):
    """Runs a `switchyard` client command. SWITCHYARD_EXIT_WITH_PARENT (the test harness's pid, inherited) would make
    it end itself at once, since its parent is this script: it is not passed on."""
    environment = {key: value for key, value in os.environ.items() if key != "SWITCHYARD_EXIT_WITH_PARENT"}
    return subprocess.run([args.switchyard, *arguments], capture_output=True, text=True, timeout=30, check=True, env=environment).stdout


def log(text):
    print(f"studio_test: {text}", flush=True)


def wait(what, condition, seconds=WAIT):
    end = time.monotonic() + seconds
    last = None
    while time.monotonic() < end:
        try:
            last = condition()
            if last:
                return last
        except Exception as error:  # a stale element while the page re-renders: look again
            last = error
        time.sleep(0.05)
    raise Failure(f"waited {seconds:.0f} s for {what}; last: {last!r}")


class Studio:
    def __init__(self, args):
        self.args = args
        options = webdriver.ChromeOptions()
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1440,1000",
                         "--disable-gpu", "--no-first-run", "--disable-extensions"]:
            options.add_argument(argument)
        options.binary_location = "/usr/bin/chromium"
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(WAIT)
        self.errors = []

    def quit(self):
        self.driver.quit()

    # MARK: - Page access

    def css(self, selector, root=None):
        return (root or self.driver).find_element(By.CSS_SELECTOR, selector)

    def all(self, selector, root=None):
        return (root or self.driver).find_elements(By.CSS_SELECTOR, selector)

    def top_layer(self):
        return self.all("#screen > .base, #screen > .sheet")[-1]

    def top_page(self):
        return self.all("[data-page]", self.top_layer())[-1]

    def drawer(self):
        drawer = self.css("details.drawer", self.top_page())
        if not drawer.get_attribute("open"):
            self.css("summary", drawer).click()
        return drawer

    def revision(self):
        text = self.css("#screen").get_attribute("data-revision")
        return int(text) if text else -1

    def console_errors(self):
        for entry in self.driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                self.errors.append(entry["message"])
        if self.errors:
            raise Failure("the page logged console errors:\n  " + "\n  ".join(self.errors))

    def load(self, url=None):
        self.driver.get(url or self.args.url)
        wait("the page to connect", lambda: self.css("body").get_attribute("data-connection") == "connected")

    def screenshot(self, name):
        if self.args.screenshots:
            self.driver.execute_script("document.querySelector('#toast').hidden = true")
            os.makedirs(self.args.screenshots, exist_ok=True)
            self.driver.save_screenshot(os.path.join(self.args.screenshots, name))

    def pane(self, name):
        self.css(f"#tab-{name}").click()

    # MARK: - The host

    def tree(self):
        return json.loads(switchyard(self.args, "tree", "--format", "json", "--socket", self.args.socket))

    def shown(self):
        """The top page and the selected tab of each tab bar, read in one script: the page re-renders on its own (a
        plugin that comes back makes it read the tree again without a new revision), and elements found by one call
        can be gone by the next."""
        return self.driver.execute_script("""
            const layers = document.querySelectorAll('#screen > .base, #screen > .sheet');
            const layer = layers[layers.length - 1];
            const pages = layer ? layer.querySelectorAll('[data-page]') : [];
            const page = pages[pages.length - 1];
            const tabs = {};
            for (const tab of document.querySelectorAll('.tab[data-selected="true"]')) {
                tabs[tab.getAttribute('data-instance')] ??= tab.getAttribute('data-tab');
            }
            if (!page) return {page: null, tabs};
            const entry = page.getAttribute('data-entry');
            return {page: [Number(page.getAttribute('data-instance')), entry ? Number(entry) : entry,
                           page.getAttribute('data-route'), page.getAttribute('data-screen')],
                    placeholder: page.hasAttribute('data-placeholder'), tabs};""")

    def check(self, step):
        """The page shows what the host holds: same revision, the same top screen, the same selected tabs."""
        # The host may still be applying the step, and the page may still be rendering it: read both again until they
        # agree, and fail with the last disagreement.
        disagreement = []

        def settled():
            current = self.tree()
            revision = self.revision()
            if current["revision"] != revision:
                disagreement[:] = [f"the host is at revision {current['revision']}, the page at {revision}"]
                return None
            expected = visible_top(current)
            page = self.shown()
            shown = tuple(page["page"]) if page["page"] else None
            if expected[0] == "placeholder":
                if not page.get("placeholder"):
                    disagreement[:] = [f"expected a placeholder for #{expected[1]}, the page shows {shown}"]
                    return None
            elif shown != expected:
                disagreement[:] = [f"the host's top screen is {expected}, the page shows {shown}"]
                return None
            for tabs in (node for node in current["instances"] if node.get("kind") == "tabs"):
                selected = page["tabs"].get(str(tabs["id"]))
                if selected is not None and selected != tabs["selectedTab"]:
                    disagreement[:] = [f"tab bar of #{tabs['id']} shows {selected}, the host {tabs['selectedTab']}"]
                    return None
            return current, expected
        try:
            tree, expected = wait(f"the page and the host to agree after '{step}'", settled)
        except Failure as failure:
            raise Failure(f"{step}: {disagreement[0] if disagreement else failure}") from None
        self.console_errors()
        log(f"ok: {step} (revision {tree['revision']}, top {expected})")
        return tree


def visible_top(tree):
    """The screen a phone shows on top, from the snapshot alone: each stack's last entry, the selected tab, a wrapper's
    child, down to a screen."""
    nodes = {node["id"]: node for node in tree["instances"]}
    current = nodes[tree["root"]]
    while True:
        if current.get("pending") or "kind" not in current:
            return ("placeholder", current["id"])
        if current["kind"] == "stack":
            top = ([current["root"]] + current.get("entries", []))[-1]
        elif current["kind"] == "tabs":
            top = next(tab for tab in current["tabs"] if tab["route"] == current["selectedTab"])
        else:
            top = current["child"]
        content = top["content"]
        if "coordinator" in content:
            current = nodes[content["coordinator"]]
            continue
        return (current["id"], top["entry"], top["route"], content["screen"]["name"])


def instance_of(tree, plugin, type_name):
    return next(node for node in tree["instances"] if node["plugin"] == plugin and node["type"] == type_name)


def trace_messages(path):
    """Each traced message's exact text: the record splices it in as it crossed the pipe, as its last member."""
    messages = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            record = json.loads(line)
            if "message" in record:
                messages.append((record["plugin"], record["direction"], line[line.index('"message":') + 10:-1], record["message"]))
    return messages


# MARK: - Scenarios

def walk(studio, args):
    studio.load()
    tree = studio.check("start: signed out, on the login screen")
    if tree["instances"][0]["root"]["route"] != "unauthenticated":
        raise Failure("the demo app did not start signed out")

    # A link into the signed-in app, opened signed out from the address bar, waits (spec §13.5): a banner says what
    # for, and its Cancel button drops it.
    address = studio.css("#address")
    address.click()
    address.send_keys("switchyard://todos/todo/42", Keys.ENTER)
    wait("the waiting link's banner", lambda: studio.css("#link-banner").is_displayed())
    if "waits until root 'authenticated'" not in studio.css("#link-banner-text").text:
        raise Failure("the banner does not say what the link waits for: " + studio.css("#link-banner-text").text)
    studio.css("#link-cancel").click()
    wait("the banner gone once cancelled", lambda: not studio.css("#link-banner").is_displayed())
    address.clear()
    studio.check("a deferred link cancelled: nothing changed")

    # Sign in through the login screen's route: registration, then its `done` route with a user name (the Python
    # plugin then asks Main, a Swift plugin, to switch root).
    unauthenticated = instance_of(tree, "unauthenticated", "unauthenticated")["id"]
    studio.css(f'[data-route-button="{unauthenticated}:registration"]', studio.drawer()).click()
    wait("the registration flow", lambda: any(n["type"] == "registration" for n in studio.tree()["instances"]))
    studio.check("route registration")
    registration = instance_of(studio.tree(), "unauthenticated", "registration")["id"]
    studio.css(f'[data-route-button="{registration}:done"]', studio.drawer()).click()
    field = wait("the form for done's params", lambda: studio.css(f'form[data-form="route:{registration}:done"] input[name="user"]'))
    field.send_keys("alice", Keys.ENTER)
    wait("the authenticated root", lambda: studio.tree()["instances"][0]["root"]["route"] == "authenticated")
    studio.check("signed in as alice")

    # The address bar says whether a link is valid as one types, and opens it on Enter.
    address = studio.css("#address")
    address.click()
    address.send_keys("switchyard://todos/nowhere")
    wait("an invalid verdict", lambda: studio.css("#address-form").get_attribute("data-valid") == "false")
    address.clear()
    address.send_keys("switchyard://todos/todo/42")
    wait("a valid verdict", lambda: studio.css("#address-form").get_attribute("data-valid") == "true")
    address.send_keys(Keys.ENTER)
    wait("todo 42", lambda: visible_top(studio.tree())[3] == "Todo")
    tree = studio.check("open switchyard://todos/todo/42")
    studio.screenshot("studio-app.png")

    home = instance_of(tree, "authenticated", "home")["id"]
    studio.css(f'.tab[data-instance="{home}"][data-tab="projects"]').click()
    wait("the projects tab", lambda: instance_of(studio.tree(), "authenticated", "home")["selectedTab"] == "projects")
    studio.check("tap the Projects tab")
    studio.css(f'.tab[data-instance="{home}"][data-tab="todos"]').click()
    wait("the todos tab", lambda: instance_of(studio.tree(), "authenticated", "home")["selectedTab"] == "todos")
    tree = studio.check("back to the Todos tab")
    studio.css(f'.tab[data-instance="{home}"][data-tab="todos"]').click()
    wait("the re-tap to reach the plugin (tabSelected, isRepeat)",
         lambda: any(m[3].get("method") == "coordinator/tabSelected" and m[3]["params"].get("isRepeat") for m in trace_messages(args.trace)))
    if studio.check("re-tap the Todos tab")["revision"] != tree["revision"]:
        raise Failure("a re-tap changed the revision")

    todos = instance_of(tree, "todos", "todos")["id"]
    studio.css(f'[data-route-button="{todos}:createTodo"]', studio.drawer()).click()
    wait("the createTodo sheet", lambda: studio.all(f'.sheet[data-sheet-route="createTodo"]'))
    studio.check("open the createTodo modal")
    sheet = studio.css('.sheet[data-sheet-route="createTodo"]')
    modal_entry = int(sheet.get_attribute("data-sheet-entry"))
    studio.css("[data-dismiss]", sheet).click()
    wait("the modal to go", lambda: all(e["route"] != "createTodo" for e in instance_of(studio.tree(), "todos", "todos").get("entries", [])))
    studio.check("dismiss the modal with its control")
    wait("coordinator/dismissed with reason user for the modal's entry", lambda: any(
        m[0] == "todos" and m[1] == "out" and m[3].get("method") == "coordinator/dismissed"
        and m[3]["params"].get("reason") == "user" and m[3]["params"].get("entry") == modal_entry
        for m in trace_messages(args.trace)))

    studio.css("[data-back]", studio.top_page()).click()
    wait("the todo list", lambda: visible_top(studio.tree())[3] == "TodoList")
    studio.check("back")

    # A screen's declared action is a button (its params a form); its coordinator decides where to go (here: back,
    # and a badge on the todos tab, in one revision).
    address.clear()
    address.send_keys("switchyard://todos/todo/42", Keys.ENTER)
    wait("todo 42 again", lambda: visible_top(studio.tree())[3] == "Todo")
    studio.check("open todo 42 again")
    studio.css('[data-action="complete"]', studio.top_page()).click()
    field = wait("the form for complete's params", lambda: studio.css('form[data-form^="action:"] input[name="id"]'))
    field.send_keys("42", Keys.ENTER)
    wait("the action to pop the todo", lambda: visible_top(studio.tree())[3] == "TodoList")
    tree = studio.check("action complete")
    badge = next(tab.get("badge") for tab in instance_of(tree, "authenticated", "home")["tabs"] if tab["route"] == "todos")
    shown = wait("the badge on the todos tab", lambda: studio.all('[data-badge="todos"]'))[0].text
    if not badge or shown != badge:
        raise Failure(f"the todos tab's badge: host {badge!r}, page {shown!r}")
    log(f"ok: the action's badge shows ({shown})")

    # The traffic pane shows the exact lines of a route request and its answer, for a Python and a Swift plugin.
    studio.pane("traffic")
    traced = trace_messages(args.trace)
    for plugin in ["unauthenticated", "todos"]:
        rows = wait(f"{plugin}'s coordinator/route rows", lambda: [
            row for row in studio.all(f'.traffic-row[data-plugin="{plugin}"][data-method="coordinator/route"]')
            if row.get_attribute("data-kind") in ("request", "response")])
        kinds = {row.get_attribute("data-kind") for row in rows}
        if kinds != {"request", "response"}:
            raise Failure(f"{plugin}: expected a route request and its answer in the traffic pane, got {kinds}")
        exact = {raw for (p, _, raw, _) in traced if p == plugin}
        for row in rows:
            raw = studio.driver.execute_script("return arguments[0].querySelector('.raw-line').textContent", row)
            if raw not in exact:
                raise Failure(f"{plugin}: the traffic pane shows a line that is not in the trace file byte for byte: {raw}")
        log(f"ok: traffic shows {len(rows)} exact coordinator/route lines of {plugin}")
    studio.css("#traffic-method").send_keys("coordinator/route")
    for row in studio.all('.traffic-row[data-plugin="todos"][data-method="coordinator/route"]')[-2:]:
        row.click()
    studio.screenshot("studio-traffic.png")

    # Kill a plugin with the fault button: its nodes go unavailable, and come back once it is restarted.
    studio.pane("plugins")
    studio.css('[data-fault="SIGKILL"][data-plugin="todos"]').click()
    wait("the timeline to record todos unavailable", lambda: any(
        "unavailable" in item.get_attribute("textContent") and "todos." in item.get_attribute("textContent") for item in studio.all(".timeline-row .changes li")), seconds=30)
    wait("todos to serve again", lambda: all(n.get("status") == "ok" for n in studio.tree()["instances"] if n["plugin"] == "todos"), seconds=30)
    wait("the timeline to record todos available again", lambda: any(
        "available again" in item.get_attribute("textContent") and "todos." in item.get_attribute("textContent") for item in studio.all(".timeline-row .changes li")), seconds=30)
    wait("the page to show no unavailable node", lambda: not studio.all("#screen [data-unavailable]"))
    studio.check("the killed plugin is back")
    studio.screenshot("studio-plugins.png")
    studio.pane("timeline")
    studio.screenshot("studio-timeline.png")
    studio.pane("tree")
    studio.console_errors()


def sync(studio, args):
    studio.load()
    first = studio.driver.current_window_handle
    if any(button.is_enabled() for button in studio.all("[data-fault]")):
        raise Failure("fault buttons are enabled without --allow-faults")
    log("ok: fault buttons are disabled without --allow-faults")
    studio.driver.switch_to.new_window("window")
    second = studio.driver.current_window_handle
    studio.load()
    tree = studio.check("second tab")
    main = tree["root"]
    studio.driver.switch_to.window(first)
    studio.css(f'[data-route-button="{main}:about"]', studio.drawer()).click()
    wait("the about modal", lambda: visible_top(studio.tree())[2] == "about")
    studio.check("first tab: route about")
    studio.driver.switch_to.window(second)
    studio.check("second tab follows")
    # A change from another client (the CLI) shows in both.
    switchyard(args, "nav", "--socket", args.socket, "@root", "popLast")
    if visible_top(studio.check("second tab after a CLI change"))[2] == "about":
        raise Failure("the CLI's popLast did not reach the second tab")
    studio.driver.switch_to.window(first)
    studio.check("first tab after a CLI change")

    # The host goes: both show "disconnected"; a host back on the socket: both reconnect.
    switchyard(args, "shutdown", "--socket", args.socket)
    for handle in (first, second):
        studio.driver.switch_to.window(handle)
        wait("the disconnected state", lambda: studio.css("body").get_attribute("data-connection") == "disconnected"
             and studio.css("#disconnected").is_displayed())
    log("ok: both tabs show disconnected")
    environment = dict(os.environ, SWITCHYARD_EXIT_WITH_PARENT=str(os.getpid()))
    host = subprocess.Popen([args.switchyard, "run", "--manifest", args.manifest, "--socket", args.socket],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    try:
        for handle in (first, second):
            studio.driver.switch_to.window(handle)
            wait("the page to reconnect", lambda: studio.css("body").get_attribute("data-connection") == "connected", seconds=30)
            studio.check("reconnected")
        switchyard(args, "shutdown", "--socket", args.socket)
        host.wait(timeout=30)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(timeout=10)


# MARK: - From outside, without a browser

def endpoint(url):
    rest = url.split("://", 1)[1]
    hostport, token = rest.split("/")[0], rest.split("/")[1]
    return hostport.split(":")[0], int(hostport.split(":")[1]), token


def http_get(port, path, host_header=None, address="127.0.0.1"):
    """The status of a raw GET (no client library between the test and the wire)."""
    with socket.create_connection((address, port), timeout=10) as connection:
        request = f"GET {path} HTTP/1.1\r\nHost: {host_header or f'127.0.0.1:{port}'}\r\nConnection: close\r\n\r\n"
        connection.sendall(request.encode())
        response = b""
        while b"\r\n" not in response:
            chunk = connection.recv(4096)
            if not chunk:
                break
            response += chunk
    return int(response.split(b" ", 2)[1])


class RawWebSocket:
    """A minimal WebSocket client (RFC 6455), so the test controls every header and whether it reads at all."""

    def __init__(self, port, path, origin):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        headers = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket", "Connection: Upgrade",
                   f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if origin:
            headers.append(f"Origin: {origin}")
        self.socket.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.socket.recv(1)
            if not chunk:
                break
            head += chunk
        self.status = int(head.split(b" ", 2)[1]) if head else 0
        self.buffer = b""

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        self.socket.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def read(self, count):
        while len(self.buffer) < count:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise Failure("the studio closed the WebSocket")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def receive(self):
        """The next text message (pings answered, other control frames skipped)."""
        while True:
            first, second = self.read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self.read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self.read(8))[0]
            payload = self.read(length)
            if first & 0x0F == 0x1:
                return json.loads(payload)
            if first & 0x0F == 0x8:
                raise Failure("the studio closed the WebSocket")

    def answer(self, request_id):
        while True:
            message = self.receive()
            if message.get("id") == request_id:
                return message

    def vanish(self):
        """Gone without a close frame: a reset, as when a browser process dies."""
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.socket.close()


def security(args):
    _, port, token = endpoint(args.url)
    checks = [
        ("no token", http_get(port, "/"), 403),
        ("no token, a file", http_get(port, "/app.js"), 403),
        ("a wrong token", http_get(port, f"/{'0' * len(token)}/"), 403),
        ("the token", http_get(port, f"/{token}/"), 200),
        ("a module", http_get(port, f"/{token}/app.js"), 200),
        ("outside the page's files", http_get(port, f"/{token}/../../etc/passwd"), 404),
        ("another Host (DNS rebinding)", http_get(port, f"/{token}/", host_header=f"evil.example:{port}"), 403),
    ]
    for name, got, expected in checks:
        if got != expected:
            raise Failure(f"GET with {name}: status {got}, expected {expected}")
        log(f"ok: GET with {name}: {got}")
    own = f"http://127.0.0.1:{port}"
    for name, path, origin in [("another Origin", f"/{token}/ws", "http://evil.example"), ("no Origin", f"/{token}/ws", None),
                               ("no token", "/ws", own), ("a wrong token", f"/{'0' * len(token)}/ws", own)]:
        socket_ = RawWebSocket(port, path, origin)
        if socket_.status == 101:
            raise Failure(f"a WebSocket upgrade with {name} was accepted")
        socket_.socket.close()
        log(f"ok: WebSocket upgrade with {name} refused ({socket_.status})")
    # Bound on 127.0.0.1 alone: nothing listens on the port at any other address, loopback or not.
    listening = []
    for table in ["/proc/net/tcp", "/proc/net/tcp6"]:
        with open(table) as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].rsplit(":", 1)
                if int(hex_port, 16) == port and fields[3] == "0A":
                    listening.append(address)
    if listening != ["0100007F"]:
        raise Failure(f"port {port} listens on {listening}, expected 127.0.0.1 (0100007F) only")
    for address in ["127.0.0.2"] + other_addresses():
        try:
            http_get(port, f"/{token}/", address=address)
            raise Failure(f"the studio answered on {address}")
        except OSError:
            log(f"ok: nothing answers on {address}:{port}")
    ws = RawWebSocket(port, f"/{token}/ws", own)
    if ws.status != 101:
        raise Failure(f"the page's own upgrade was refused ({ws.status})")
    hello = ws.receive()
    if hello.get("method") != "studio/hello" or hello["params"].get("faults") is not False:
        raise Failure(f"unexpected hello: {hello}")
    for request_id, method, params in [(1, "plugin/signal", {"plugin": "todos", "signal": "SIGKILL"}), (2, "host/shutdown", {})]:
        ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        answer = ws.answer(request_id)
        if answer.get("error", {}).get("code") != -32011:
            raise Failure(f"the relay passed {method} on: {answer}")
        log(f"ok: the relay refuses {method}: {answer['error']['message']}")
    ws.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "host/status", "params": {}}))
    if "result" not in ws.answer(3):
        raise Failure("host/status through the relay failed")
    ws.socket.close()


def other_addresses():
    """This machine's non-loopback IPv4 addresses (none on a machine without a network)."""
    try:
        output = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return []
    return [address for address in output.split() if "." in address and not address.startswith("127.")]


def control(path):
    """A raw control client of the host (Protocol/README.md §15)."""
    connection = socket.socket(socket.AF_UNIX)
    connection.settimeout(20)
    connection.connect(path)
    reader = connection.makefile("rb")
    counter = [0]

    def call(method, params):
        counter[0] += 1
        connection.sendall((json.dumps({"jsonrpc": "2.0", "id": counter[0], "method": method, "params": params}) + "\n").encode())
        while True:
            message = json.loads(reader.readline())
            if message.get("id") == counter[0]:
                if "error" in message:
                    raise Failure(f"{method}: {str(message['error'])[:300]}")
                return message["result"]
    return call


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def slow(args):
    _, port, token = endpoint(args.url)
    call = control(args.socket)
    host = call("host/status", {})["host"]["pid"]
    call("navigate", {"steps": [{"op": "setRoot", "route": "authenticated", "params": {"user": "alice"}}]})
    todos = next(n["id"] for n in call("tree/get", {})["instances"] if n["type"] == "todos")
    baseline = descriptors(host)

    # A page that goes away: the studio ends its control connection.
    gone = RawWebSocket(port, f"/{token}/ws", f"http://127.0.0.1:{port}")
    gone.receive()
    gone.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tree/subscribe", "params": {}}))
    gone.answer(1)
    if descriptors(host) <= baseline:
        raise Failure("the page's control connection does not show in the host's descriptors")
    gone.vanish()
    wait("the studio to close a vanished page's control connection", lambda: descriptors(host) <= baseline)
    log("ok: a vanished page costs the host nothing once it is gone")

    # A page that never reads while the tree changes fast, with large snapshots.
    stuck = RawWebSocket(port, f"/{token}/ws", f"http://127.0.0.1:{port}")
    stuck.receive()
    stuck.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tree/subscribe", "params": {}}))
    stuck.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "trace/subscribe", "params": {}}))
    big = "x" * 100_000
    for index in range(50):
        # A project pushed from the todos tab takes any id (the Node plugin shows it as the project's name).
        call("navigate", {"instance": todos, "steps": [{"op": "route", "route": "project", "params": {"id": f"{index}{big}"}}]})
        call("navigate", {"instance": todos, "steps": [{"op": "popLast"}]})
    log("ok: the host answered 100 navigations while a page did not read")
    wait("the host to drop the page's control connection", lambda: descriptors(host) <= baseline, seconds=30)
    log("ok: the host dropped the client that did not read, at its bounded queue")
    call("$/ping", {})
    stuck.vanish()


def large(args):
    _, port, token = endpoint(args.url)
    call = control(args.socket)
    page = RawWebSocket(port, f"/{token}/ws", f"http://127.0.0.1:{port}")
    page.receive()
    page.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tree/subscribe", "params": {}}))
    try:
        answer = page.answer(1)
        if "result" not in answer:
            raise Failure(f"tree/subscribe through the relay failed: {answer}")
        log(f"ok: a {len(json.dumps(answer))}-byte answer reached the page")
        call("navigate", {"steps": [{"op": "setRoot", "route": "authenticated", "params": {"user": "x" * 300_000}}]})
        while True:
            message = page.receive()
            if message.get("method") == "tree/changed" and len(json.dumps(message)) > 300_000:
                break
        log("ok: a tree/changed of more than 300 kB reached the page")
    except socket.timeout:
        raise Failure("a line larger than the studio's backlog limit never reached the page")
    page.socket.close()


def main():
    args = parse()

    def expired(*_):
        raise Failure(f"the scenario did not finish within {args.deadline} s")

    signal.signal(signal.SIGALRM, expired)
    signal.alarm(args.deadline)
    if args.scenario in ("security", "slow", "large"):
        try:
            {"security": security, "slow": slow, "large": large}[args.scenario](args)
            log(f"scenario {args.scenario} passed")
            return 0
        except Failure as failure:
            print(f"studio_test: FAILED: {failure}", file=sys.stderr, flush=True)
            return 1
        finally:
            signal.alarm(0)
    load_selenium()
    studio = Studio(args)
    try:
        {"walk": walk, "sync": sync}[args.scenario](studio, args)
        log(f"scenario {args.scenario} passed")
    except Failure as failure:
        print(f"studio_test: FAILED: {failure}", file=sys.stderr, flush=True)
        if args.screenshots is None:
            studio.driver.save_screenshot(f"/tmp/studio-failure-{os.getpid()}.png")
        return 1
    finally:
        signal.alarm(0)
        studio.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
