/// The Python plugin: one script on the installed SDK (`pip install …/Protocol/sdk/python`), and a unittest test
/// that runs it as the host does, as a process spoken to in protocol lines.
extension PluginTemplate {
    var pythonFiles: [GeneratedFile] {
        [
            GeneratedFile(path: "\(names.snake).py", text: pythonPlugin, isExecutable: true),
            GeneratedFile(path: "test_\(names.snake).py", text: pythonTest),
            GeneratedFile(path: "test_app.py", text: pythonAppTest),
            GeneratedFile(path: "switchyard.json", text: manifest(command: ["python3", "\(names.snake).py"])),
            GeneratedFile(path: "scenario.txt", text: scenario),
            GeneratedFile(path: ".gitignore", text: "__pycache__/\n.venv/\n"),
        ]
    }

    private var pythonKindCoordinator: String {
        switch kind {
        case .stack: return ""
        case .tabs:
            return """



                @plugin.coordinator
                class \(names.pascal)Tabs(switchyard.Coordinator):
                    \"\"\"The app's tab bar: the \(names.plugin) stack in the first tab, a plain screen in the second. The deep links
                    name the tab a link selects before it continues inside it (browse/item/42).\"\"\"
                    type_name = "\(rootType)"
                    kind = "tabs"
                    routes = [
                        # The target is declared, not only returned, so the host can check links into the tab before any
                        # instance exists.
                        switchyard.tab("browse", deep_link="browse", target="\(names.type)"),
                        switchyard.tab("about", deep_link="about"),
                    ]

                    def browse(self, params, link):
                        return coordinator("\(names.type)")

                    def about(self, params, link):
                        return screen("\(names.pascal)About")
                """
        case .wrapper:
            return """



                @plugin.coordinator
                class \(names.pascal)Navigation(switchyard.Coordinator):
                    \"\"\"A container around the \(names.plugin) stack (Stinsen's NavigationViewCoordinator): the UI draws the
                    navigation bar once for it, and deep links pass through it to the stack inside.\"\"\"
                    type_name = "\(rootType)"
                    kind = "wrapper"
                    routes = [switchyard.child("content", target="\(names.type)")]

                    def content(self, params, link):
                        return coordinator("\(names.type)")
                """
        }
    }

    var pythonPlugin: String {
        """
        #!/usr/bin/env python3
        \"\"\"The \(names.plugin) plugin for Switchyard.

        The host starts this script and speaks the protocol (JSON-RPC, one message per line) on its stdin and stdout; the
        SDK speaks it, so this file only declares coordinators. The SDK must be installed in the python3 that
        `switchyard run` finds on the PATH:

            pip install \(checkout ?? "SWITCHYARD")/Protocol/sdk/python

        Try it:  switchyard run --manifest switchyard.json --script scenario.txt
        Test it: python3 -m unittest
        \"\"\"
        import switchyard
        from switchyard import \(kind == .stack ? "" : "coordinator, ")reject, screen

        plugin = switchyard.Plugin("\(names.plugin)", "0.1.0")


        async def find_item(item_id):
            \"\"\"Stands for a lookup in a database or a web service: awaitable, as most real ones are.\"\"\"
            return {"id": item_id} if item_id >= 1 else None


        @plugin.coordinator
        class \(names.pascal)(switchyard.Coordinator):
            \"\"\"The \(names.plugin) flow: a home screen, items pushed by id, settings presented over them.\"\"\"
            type_name = "\(names.type)"
            initial = "home"
            routes = [
                switchyard.root("home"),
                # Declaring `id` an integer makes the host turn the link item/42 into 42 and refuse item/abc before this
                # process is asked.
                switchyard.push("item", deep_link="item/:id", params=[{"name": "id", "type": "integer"}]),
                switchyard.modal("settings", deep_link="settings"),
            ]

            # Screen names are what the UI shell maps to views; the plugin's prefix keeps them apart from other plugins'.
            def home(self, params, link):
                return screen("\(names.pascal)Home")

            # A route method may be `async def`: the host's request is answered when it returns, and the plugin answers
            # others meanwhile. A guard: reject() fails the whole navigation (rejectedByGuard), the tree stays as it was.
            async def item(self, params, link):
                found = await find_item(params["id"])
                if found is None:
                    raise reject("there is no item %d" % params["id"])
                return screen("\(names.pascal)Item", id=found["id"])

            def settings(self, params, link):
                return screen("\(names.pascal)Settings")\(pythonKindCoordinator)


        if __name__ == "__main__":
            plugin.run()

        """
    }

    private var pythonKindTest: String {
        switch kind {
        case .stack: return ""
        case .tabs:
            return """


                    def test_tabs_open_the_stack_and_a_screen(self):
                        result = self.host.request("coordinator/create", {"instance": 2, "type": "\(rootType)", "reason": "new"})["result"]
                        self.assertEqual([tab["route"] for tab in result["tabs"]], ["browse", "about"])
                        self.assertEqual(result["tabs"][0]["content"], {"coordinator": {"type": "\(names.type)"}})
                        self.assertEqual(result["tabs"][1]["content"], {"screen": {"name": "\(names.pascal)About"}})
                """
        case .wrapper:
            return """


                    def test_wrapper_child_is_the_stack(self):
                        result = self.host.request("coordinator/create", {"instance": 2, "type": "\(rootType)", "reason": "new"})["result"]
                        self.assertEqual(result["child"], {"coordinator": {"type": "\(names.type)"}})
                """
        }
    }

    var pythonTest: String {
        """
        \"\"\"Tests of the \(names.plugin) plugin. The plugin runs as its own process and each test speaks the protocol to it
        as the host does, so what passes here is what `switchyard run` sees. Run: python3 -m unittest\"\"\"
        import json
        import os
        import queue
        import subprocess
        import sys
        import threading
        import unittest

        import switchyard

        PLUGIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "\(names.snake).py")

        # What the host sends first (Protocol/README.md §3): the versions it speaks, who it is, the plugin's name in the
        # manifest and the limits it enforces.
        INITIALIZE = {
            "protocolVersions": switchyard.PROTOCOL_VERSIONS,
            "host": {"name": "test", "version": "0"},
            "pluginName": "\(names.plugin)",
            "limits": {"maxLineBytes": 1048576, "maxMessagesPerSecond": 20000, "maxOutstandingRequests": 64,
                       "maxInstances": 10000, "maxStderrBytesPerSecond": 65536, "requestTimeoutMs": 5000},
        }


        class Host:
            \"\"\"The host's side of one plugin process, as much of it as a test needs: requests and their answers.\"\"\"

            def __init__(self):
                self.process = subprocess.Popen([sys.executable, PLUGIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                self.next_id = 0
                # A reader thread, so that a plugin that never answers fails the test instead of hanging it.
                self.lines = queue.Queue()
                threading.Thread(target=self._read, daemon=True).start()

            def _read(self):
                with self.process.stdout as stdout:
                    for line in stdout:
                        self.lines.put(line)
                self.lines.put(None)

            def send(self, message):
                self.process.stdin.write(json.dumps(dict(message, jsonrpc="2.0")) + "\\n")
                self.process.stdin.flush()

            def request(self, method, params):
                self.next_id += 1
                self.send({"id": self.next_id, "method": method, "params": params})
                while True:
                    line = self.lines.get(timeout=10)
                    if line is None:
                        raise AssertionError("the plugin exited before answering %s" % method)
                    message = json.loads(line)
                    if message.get("id") == self.next_id:  # not a log notification
                        return message

            def close(self):
                \"\"\"Closes stdin, as the host does last: the protocol says the plugin then exits. Returns its status.\"\"\"
                self.process.stdin.close()
                try:
                    return self.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    raise


        class \(names.pascal)Test(unittest.TestCase):
            def setUp(self):
                self.host = Host()
                self.addCleanup(self.host.close)
                self.declared = self.host.request("initialize", INITIALIZE)["result"]
                self.host.send({"method": "initialized"})
                self.created = self.host.request("coordinator/create", {"instance": 1, "type": "\(names.type)", "reason": "new"})["result"]

            def route(self, route, transition, params=None):
                return self.host.request("coordinator/route", {
                    "instance": 1, "type": "\(names.type)", "route": route, "transition": transition, "params": params or {}})

            def test_item_route_declares_its_deep_link_and_integer_id(self):
                stack = next(t for t in self.declared["coordinators"] if t["type"] == "\(names.type)")
                item = next(r for r in stack["routes"] if r["name"] == "item")
                self.assertEqual(item["deepLink"], "item/:id")
                self.assertEqual(item["params"], [{"name": "id", "type": "integer"}])

            def test_new_stack_shows_home(self):
                self.assertEqual(self.created["root"], {"route": "home", "content": {"screen": {"name": "\(names.pascal)Home"}}})

            def test_item_shows_its_id(self):
                answer = self.route("item", "push", {"id": 42})
                self.assertEqual(answer["result"]["content"], {"screen": {"name": "\(names.pascal)Item", "props": {"id": 42}}})

            def test_guard_refuses_item_zero(self):
                answer = self.route("item", "push", {"id": 0})
                self.assertEqual(answer["error"]["code"], switchyard.REJECTED_BY_GUARD)
                self.assertEqual(answer["error"]["message"], "there is no item 0")

            def test_exits_when_the_host_closes_stdin(self):
                self.assertEqual(self.host.close(), 0)\(pythonKindTest)


        if __name__ == "__main__":
            unittest.main()

        """
    }
}
