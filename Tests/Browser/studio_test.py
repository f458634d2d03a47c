#!/usr/bin/env python3
"""Drives the Switchyard Studio in a real headless Chromium (Selenium) and checks what the page shows against the host.

Run by Tests/SwitchyardHostTests/StudioTests.swift, which starts the host and the studio and ends them. Scenarios:

  walk      the acceptance walk on the demo app (`switchyard run --studio --allow-faults --trace FILE`), by tapping
            only: the forgot-password sheet (a refused form, its error at the button), sign in with the form (a locked
            account refused at the button), open a todo from its row, complete it, a sheet dismissed with its control
            (the plugin hears reason user), add a todo with the sheet's form, tabs and a re-tap, a project's members
            (an archived one refused at the row), back, sign out through its confirmation; screens of the Python, Swift
            and Node plugins drawn from their content; after each step the page is compared with `switchyard tree
            --format json`. A reloaded page shows every revision made before it loaded (tree/history). Then the
            address bar, the traffic pane (exact lines of a Python and a Swift plugin) and SIGKILL from a fault button:
            the plugin's nodes go unavailable and come back; then the Upgrade button: the entry's command started again
            takes over with every instance (same ids, a new pid, one revision recorded as an upgrade). Screenshots go
            to --screenshots when given.
  sync      two tabs on one host stay in sync; fault buttons are off without --allow-faults; the host going away shows
            "disconnected", and the page reconnects when a host is back on the socket.
  security  (no browser) from outside: no token or a wrong one is 403, so is another Host; a WebSocket upgrade from
            another Origin or without the token is refused; the port is bound on 127.0.0.1 only; the relay refuses
            fault methods without --allow-faults, never relays host/shutdown, and refuses a plugin/upgrade that names
            a command, a product or arguments (a page may only start the entry's own command again).
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


def chromium(window):
    """Debian's headless Chromium through its chromedriver, keeping the page's console (read with get_log)."""
    load_selenium()
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={window}",
                     "--disable-gpu", "--no-first-run", "--disable-extensions"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(WAIT)
    return driver


class Studio:
    def __init__(self, args):
        self.args = args
        self.driver = chromium("1440,1000")
        self.errors = []

    def quit(self):
        self.driver.quit()

    # MARK: - Page access

    def css(self, selector, root=None):
        return (root or self.driver).find_element(By.CSS_SELECTOR, selector)

    def all(self, selector, root=None):
        return (root or self.driver).find_elements(By.CSS_SELECTOR, selector)

    def tap(self, selector):
        """Clicks the element `selector` names, found again if the page re-rendered it between the find and the click
        (the plugins pane redraws its cards on every plugin/changed): an element replaced by its equal is no failure,
        one that never appears is."""
        def click():
            self.css(selector).click()
            return True
        wait(f"a click on {selector}", click)

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

    # MARK: - The app, as a user taps it

    def tap_button(self, title):
        """Taps the button `title` of the screen on top, once it is there and enabled."""
        button = wait(f"the button {title!r}", lambda: next(
            (b for b in self.all(f'button.ui-button[data-title="{title}"]', self.top_page()) if b.is_enabled()), None))
        button.click()

    def tap_row(self, title):
        """Taps the row `title` of the screen on top."""
        row = wait(f"the row {title!r}", lambda: next(
            (r for r in self.all(f'button.ui-row[data-row-title="{title}"]', self.top_page()) if r.is_enabled()), None))
        row.click()

    def type_into(self, input_id, text, replace=False):
        """Types into the input `input_id` of the screen on top (replacing what it holds when asked)."""
        field = wait(f"the input {input_id!r}", lambda: self.css(f'[data-input="{input_id}"]', self.top_page()))
        field.click()
        if replace:
            field.send_keys(Keys.CONTROL, "a")
        field.send_keys(text)

    def element_error(self, title, row=False):
        """The typed error shown at the element `title` (a button, or a row) once its action failed."""
        attribute = "data-row-title" if row else "data-title"
        return wait(f"the error at {title!r}", lambda: self.driver.execute_script("""
            const layers = document.querySelectorAll('#screen > .base, #screen > .sheet');
            const pages = layers[layers.length - 1].querySelectorAll('[data-page]');
            const element = pages[pages.length - 1].querySelector(`[${arguments[0]}="${arguments[1]}"]`);
            const error = element && element.closest('.ui-with-error') && element.closest('.ui-with-error').querySelector('.ui-error');
            return error && !element.disabled ? error.textContent : null;""", attribute, title))

    def expect_badge(self, tree, badge):
        """The todos tab's badge: the host's, and the page shows it."""
        held = next(tab.get("badge") for tab in instance_of(tree, "authenticated", "home")["tabs"] if tab["route"] == "todos")
        shown = wait("the badge on the todos tab", lambda: self.all('[data-badge="todos"]'))[0].text
        if held != badge or shown != badge:
            raise Failure(f"the todos tab's badge: host {held!r}, page {shown!r}, expected {badge!r}")
        log(f"ok: the todos tab's badge shows {badge}")

    def expect_vocabulary(self, what, types):
        """The screen on top is drawn from its content: each element the host holds is on the page, and the element
        types named are drawn as the vocabulary's controls."""
        tree = self.tree()
        top = visible_top(tree)
        node = next(n for n in tree["instances"] if n["id"] == top[0])
        entries = [node.get("root")] + node.get("entries", []) + node.get("tabs", []) + [node.get("child")]
        screen = next(e for e in entries if e and e["entry"] == top[1])["content"]["screen"]
        content = screen.get("content")
        if not content:
            raise Failure(f"{what}: the host holds no content for {top}")
        page = self.top_page()
        missing = [i for i in range(len(content)) if not self.all(f'[data-element="content[{i}]"]', page)]
        if missing:
            raise Failure(f"{what}: elements {missing} of the content are not drawn")
        selectors = {"textField": 'input.ui-input[type="text"]', "secureField": 'input.ui-input[type="password"]',
                     "button": "button.ui-button", "symbol": ".ui-symbol svg[data-symbol]", "text": "p.ui-text",
                     "list": ".ui-list .ui-row", "toggle": 'input.ui-switch[role="switch"]', "picker": "select.ui-picker"}
        for kind in types:
            if not any(element["type"] == kind for element in content) or not self.all(selectors[kind], page):
                raise Failure(f"{what}: no {kind} drawn")
        if screen.get("title") and self.css(".navbar .title", page).text != screen["title"]:
            raise Failure(f"{what}: the navigation bar does not show the title {screen['title']!r}")
        log(f"ok: {what} is drawn from its content ({len(content)} elements: {', '.join(types)})")

    def history(self):
        """The host's revision history (tree/history)."""
        return control(self.args.socket)("tree/history", {})["revisions"]

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
    """The demo app used as an app, by tapping only: every navigation below is a tap on something a screen shows (a
    row, a button, a tab, a sheet's Done), never the developer drawer or the address bar."""
    studio.load()
    tree = studio.check("start: signed out, on the sign-in screen")
    if tree["instances"][0]["root"]["route"] != "unauthenticated":
        raise Failure("the demo app did not start signed out")
    studio.expect_vocabulary("the Python plugin's sign-in screen", ["textField", "secureField", "button", "symbol", "text"])
    studio.screenshot("studio-signin.png")

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

    # The forgot-password sheet: a typed error at the element when the form is not filled in, then the form sent.
    studio.tap_button("Forgot password?")
    wait("the forgot-password sheet", lambda: studio.all('.sheet[data-sheet-route="forgotPassword"]'))
    studio.check("tap Forgot password?: the sheet")
    studio.tap_button("Send link")
    error = studio.element_error("Send link")
    if "rejectedByGuard" not in error:
        raise Failure(f"the refused Send link shows {error!r} at the button, not the plugin's typed refusal")
    log(f"ok: a refused action's typed error shows at its button: {error}")
    studio.type_into("email", "alice@example.com")
    studio.tap_button("Send link")
    wait("the sheet to go", lambda: not studio.all('.sheet[data-sheet-route="forgotPassword"]'))
    studio.check("send the reset link: the sheet is dismissed by its coordinator")

    # Sign in with the form: a locked account is refused by Main's guard (another plugin), shown at the button.
    studio.type_into("user", "mallory")
    studio.type_into("password", "secret")
    studio.tap_button("Sign in")
    error = studio.element_error("Sign in")
    if "locked" not in error:
        raise Failure(f"signing in as mallory shows {error!r}, not Main's refusal")
    studio.check("sign in as mallory: refused, nothing changed")
    studio.type_into("user", "alice", replace=True)
    studio.tap_button("Sign in")
    wait("the authenticated root", lambda: studio.tree()["instances"][0]["root"]["route"] == "authenticated")
    tree = studio.check("sign in with the form")
    home = instance_of(tree, "authenticated", "home")["id"]
    for tab, title, symbol in [("todos", "Todos", "checklist"), ("projects", "Projects", "folder"), ("profile", "Profile", "person.crop.circle")]:
        shown = studio.css(f'.tab[data-instance="{home}"][data-tab="{tab}"]')
        if shown.text.strip().splitlines()[0] != title or not studio.all(f'svg[data-symbol="{symbol}"]', shown):
            raise Failure(f"the {tab} tab shows {shown.text!r} without its {symbol} symbol")
    log("ok: the tab bar shows the declared tab items, titles and symbols")

    # Open a todo from its row; complete it (no params asked: the button carries the todo's id).
    studio.tap_row("Answer everything")
    wait("todo 42", lambda: visible_top(studio.tree())[3] == "Todo")
    studio.check("tap the row Answer everything")
    if studio.css(".navbar .title", studio.top_page()).text != "Answer everything":
        raise Failure("the todo's navigation bar does not show its title")
    # The developer drawer stays: a route's form starts from what the screen shows (the todo's id), and it closes when
    # its screen leaves.
    todos = instance_of(studio.tree(), "todos", "todos")["id"]
    studio.css(f'[data-route-button="{todos}:share"]', studio.drawer()).click()
    field = wait("the share form", lambda: studio.css(f'form[data-form$=":{todos}:share"] input[name="id"]'))
    if field.get_attribute("value") != "42":
        raise Failure(f"the share form does not start from the todo's id: {field.get_attribute('value')!r}")
    log("ok: a drawer form is filled in with what the screen shows")
    studio.tap_button("Complete")
    wait("the list again", lambda: visible_top(studio.tree())[3] == "TodoList")
    tree = studio.check("tap Complete")
    studio.expect_badge(tree, "3")
    done = studio.driver.execute_script("""
        const sections = [...document.querySelectorAll('#screen [data-page] .ui-section')];
        const done = sections.find((section) => section.querySelector('.ui-section-header')?.textContent === 'Done');
        return done ? [...done.querySelectorAll('[data-row-title]')].map((row) => row.dataset.rowTitle) : null;""")
    if done != ["Answer everything"]:
        raise Failure(f"the completed todo is not in the list's Done section: {done}")
    log("ok: the list was refreshed in place: the todo is done")
    if studio.all('#screen form[data-form^="route:"]'):
        raise Failure("the todo's drawer form is still open after its screen left")

    # The create-todo sheet: dismissed with its control first (the plugin hears reason user), then its form adds a todo.
    studio.tap_button("New todo")
    wait("the createTodo sheet", lambda: studio.all('.sheet[data-sheet-route="createTodo"]'))
    studio.check("tap New todo: the sheet")
    sheet = studio.css('.sheet[data-sheet-route="createTodo"]')
    modal_entry = int(sheet.get_attribute("data-sheet-entry"))
    studio.css("[data-dismiss]", sheet).click()
    wait("the sheet to go", lambda: not studio.all('.sheet[data-sheet-route="createTodo"]'))
    studio.check("dismiss the sheet with its control")
    wait("coordinator/dismissed with reason user for the sheet's entry", lambda: any(
        m[0] == "todos" and m[1] == "out" and m[3].get("method") == "coordinator/dismissed"
        and m[3]["params"].get("reason") == "user" and m[3]["params"].get("entry") == modal_entry
        for m in trace_messages(args.trace)))
    studio.tap_button("New todo")
    wait("the createTodo sheet again", lambda: studio.all('.sheet[data-sheet-route="createTodo"]'))
    studio.type_into("title", "Call mum")
    studio.tap_button("Add")
    wait("the new todo in the list", lambda: studio.all('#screen [data-row-title="Call mum"]'))
    tree = studio.check("add a todo with the sheet's form")
    studio.expect_badge(tree, "4")
    studio.screenshot("studio-app.png")

    # Switch tabs; a re-tap reaches the owner without a new revision.
    studio.css(f'.tab[data-instance="{home}"][data-tab="projects"]').click()
    wait("the projects tab", lambda: instance_of(studio.tree(), "authenticated", "home")["selectedTab"] == "projects")
    tree = studio.check("tap the Projects tab")
    studio.expect_vocabulary("the Node plugin's project list", ["list"])
    studio.css(f'.tab[data-instance="{home}"][data-tab="projects"]').click()
    wait("the re-tap to reach the plugin (tabSelected, isRepeat)",
         lambda: any(m[3].get("method") == "coordinator/tabSelected" and m[3]["params"].get("isRepeat") for m in trace_messages(args.trace)))
    if studio.check("re-tap the Projects tab")["revision"] != tree["revision"]:
        raise Failure("a re-tap changed the revision")

    # A project's members; an archived project's members are refused by the Node plugin's guard, at the row.
    studio.tap_row("Gemini")
    wait("the Gemini project", lambda: visible_top(studio.tree())[3] == "Project")
    studio.check("tap the row Gemini")
    studio.tap_row("Members")
    error = studio.element_error("Members", row=True)
    if "archived" not in error:
        raise Failure(f"an archived project's members show {error!r} at the row")
    studio.check("tap Members of an archived project: refused at the row")
    studio.css("[data-back]", studio.top_page()).click()
    wait("the project list", lambda: visible_top(studio.tree())[3] == "ProjectList")
    studio.check("back to the projects")
    studio.tap_row("Apollo")
    wait("the Apollo project", lambda: visible_top(studio.tree())[3] == "Project")
    studio.check("tap the row Apollo")
    studio.tap_row("Members")
    wait("Apollo's members", lambda: visible_top(studio.tree())[3] == "Members")
    studio.check("tap Members")
    if not studio.all('[data-row-title="Grace Hopper"]', studio.top_page()):
        raise Failure("the members screen does not list the project's members")
    back = studio.css("[data-back]", studio.top_page())
    if "Apollo" not in back.text:
        raise Failure(f"the back button says {back.text!r}, not the previous screen's title")
    studio.screenshot("studio-projects.png")

    # The profile (Python again), and sign out through its confirmation sheet.
    studio.css(f'.tab[data-instance="{home}"][data-tab="profile"]').click()
    wait("the profile tab", lambda: instance_of(studio.tree(), "authenticated", "home")["selectedTab"] == "profile")
    studio.check("tap the Profile tab")
    studio.tap_button("Sign out")
    wait("the sign-out sheet", lambda: studio.all('.sheet[data-sheet-route="signOut"]'))
    studio.check("tap Sign out: the confirmation sheet")
    studio.tap_button("Sign out")
    wait("the signed-out root", lambda: studio.tree()["instances"][0]["root"]["route"] == "unauthenticated")
    tree = studio.check("confirm Sign out")
    if studio.all('input[data-input="user"]', studio.top_page())[0].get_attribute("value"):
        raise Failure("the sign-in form came back with the text typed into the previous one")
    log("ok: the sign-in form is a new one (what was typed left with the old screen)")

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
    for row in studio.all('.traffic-row[data-plugin="unauthenticated"][data-method="coordinator/route"]')[-2:]:
        row.click()
    studio.screenshot("studio-traffic.png")

    studio.pane("tree")

    # Reloaded, the page shows the revisions made before it loaded, each with what made it (tree/history).
    studio.load()
    studio.pane("timeline")
    rows = wait("the timeline to show every revision since the start", lambda: (lambda shown: shown if all(
        str(revision) in shown for revision in range(1, tree["revision"] + 1)) else None)(
        {row.get_attribute("data-revision"): row.get_attribute("textContent") for row in studio.all(".timeline-row[data-history]")}))
    if "signIn" not in rows.get(str(next(r["revision"] for r in studio.history() if r["cause"] == "action" and "signIn" in r["summary"])), ""):
        raise Failure("the reloaded timeline does not say which action signed in")
    log(f"ok: after a reload the timeline shows revisions 1-{tree['revision']} with their causes")
    studio.screenshot("studio-timeline.png")
    studio.pane("tree")

    # The developer tools stay: the address bar says whether a link is valid as one types, and opens it on Enter.
    address = studio.css("#address")
    address.click()
    address.send_keys("switchyard://nowhere")
    wait("an invalid verdict", lambda: studio.css("#address-form").get_attribute("data-valid") == "false")
    address.clear()
    address.send_keys("switchyard://forgot")
    wait("a valid verdict", lambda: studio.css("#address-form").get_attribute("data-valid") == "true")
    address.send_keys(Keys.ENTER)
    wait("the forgot-password sheet from the link", lambda: visible_top(studio.tree())[2] == "forgotPassword")
    studio.check("open switchyard://forgot from the address bar")

    # Kill a plugin with the fault button: its nodes go unavailable, and come back once it is restarted.
    studio.pane("plugins")
    studio.tap('[data-fault="SIGKILL"][data-plugin="unauthenticated"]')
    wait("the timeline to record unauthenticated unavailable", lambda: any(
        "unavailable" in item.get_attribute("textContent") and "unauthenticated." in item.get_attribute("textContent") for item in studio.all(".timeline-row .changes li")), seconds=30)
    wait("unauthenticated to serve again", lambda: all(n.get("status") == "ok" for n in studio.tree()["instances"] if n["plugin"] == "unauthenticated"), seconds=30)
    wait("the timeline to record unauthenticated available again", lambda: any(
        "available again" in item.get_attribute("textContent") and "unauthenticated." in item.get_attribute("textContent") for item in studio.all(".timeline-row .changes li")), seconds=30)
    wait("the page to show no unavailable node", lambda: not studio.all("#screen [data-unavailable]"))
    studio.check("the killed plugin is back")

    # Upgrade from the plugins pane (§20.1): the entry's command started again beside the running version takes over
    # with every instance, in one revision that keeps every id; the card names both versions and its phase, and the
    # timeline says what made the revision.
    before = studio.tree()
    owned = sorted(node["id"] for node in before["instances"] if node["plugin"] == "unauthenticated")
    old_pid = next(p["pid"] for p in control(args.socket)("host/status", {})["plugins"] if p["name"] == "unauthenticated")
    studio.tap('button.upgrade[data-upgrade="unauthenticated"]')
    said = wait("the toast to report the upgrade", lambda: (lambda text: text if "unauthenticated upgraded" in text else None)(
        studio.css("#toast").get_attribute("textContent")), seconds=30)
    log(f"ok: the toast says: {said}")
    phase = wait("the card to show the upgrade's phase", lambda: (lambda card: card.get_attribute("textContent") if card.get_attribute(
        "data-phase") in ("probation", "upgraded") else None)(studio.css('[data-upgrade-phase="unauthenticated"]')))
    after = studio.check("the upgraded plugin serves its instances")
    if sorted(node["id"] for node in after["instances"] if node["plugin"] == "unauthenticated") != owned:
        raise Failure(f"the upgrade changed the instances of unauthenticated: {owned} before, {after['instances']} after")
    new_pid = next(p["pid"] for p in control(args.socket)("host/status", {})["plugins"] if p["name"] == "unauthenticated")
    if new_pid == old_pid or after["revision"] != before["revision"] + 1:
        raise Failure(f"expected a new process ({old_pid} → {new_pid}) and one revision ({before['revision']} → {after['revision']})")
    switch = next(record for record in studio.history() if record["revision"] == after["revision"])
    if switch["cause"] != "upgrade":
        raise Failure(f"the switch's revision is recorded as {switch}")
    studio.pane("timeline")
    wait("the timeline row of the switch to say upgrade", lambda: any(
        row.get_attribute("data-revision") == str(after["revision"]) and "upgraded" in row.get_attribute("textContent")
        for row in studio.all(".timeline-row")))
    studio.pane("plugins")
    log(f"ok: the upgrade button: pid {old_pid} → {new_pid}, instances {owned} kept, the card says '{phase}'")
    studio.screenshot("studio-plugins.png")
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
    # A page may upgrade a plugin to its own entry's command, never to a command of its choosing.
    refused = [(1, "plugin/signal", {"plugin": "todos", "signal": "SIGKILL"}), (2, "host/shutdown", {}),
               (4, "plugin/upgrade", {"plugin": "todos", "command": ["/bin/sh", "-c", "touch /tmp/owned"]}),
               (5, "plugin/upgrade", {"plugin": "todos", "product": "DemoTodos", "args": ["--release", "9"]})]
    for request_id, method, params in refused:
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
