import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The Python and Node packages in Protocol/sdk as a plugin author and a UI author get them: installed offline into a
/// fresh virtual environment or npm prefix (``SDKInstall``), used without any path hack, against the real
/// `switchyard run` and real plugin processes.
@Suite("Python and Node SDK packages and control clients", .heavy, .timeLimit(.minutes(3)))
struct SDKPackageTests {
    static let fixtures = packageRoot + "/Tests/Fixtures/sdk"

    /// Starts the demo app with its control socket in a fresh private folder; returns the host and the socket path.
    static func startDemoHost() async throws -> (CLIProcess, String) {
        let socket = try TestSweep.temporaryDirectory() + "/demo.sock"
        let host = try CLIProcess(["run", "--socket", socket])
        try await host.waitForStderr("switchyard: ready (6/6 plugins")
        return (host, socket)
    }

    /// Runs a command to its end; records its output as the failure when its status is not 0.
    static func expectSuccess(_ process: CLIProcess, _ what: String) async throws {
        process.closeStdin()
        let status = try await process.waitForExit()
        #expect(
            status == 0, "\(what) exited with \(status):\n\((process.stdout + process.stderr).joined(separator: "\n"))")
    }

    static func write(_ text: String, to path: String, mode: UInt32 = 0o600) throws {
        try FileSystem.writeFileAtomically(path, Array(text.utf8), mode: mode)
    }

    @Test(
        "the Python client (pip-installed): subscribe, validate, open, navigate, tree, query, dismissed, status, shutdown"
    )
    func pythonClient() async throws {
        let environment = try await SDKInstall.pythonEnvironment()
        let (host, socket) = try await Self.startDemoHost()
        let client = try CLIProcess(
            ["\(Self.fixtures)/control_client_check.py", socket, defaultControlSocketPath(app: "demo")],
            executable: environment + "/python3")
        try await Self.expectSuccess(client, "control_client_check.py")
        // The script ended with host/shutdown.
        #expect(try await host.waitForExit() == 0, "\(host.stderr.suffix(20))")
    }

    @Test(
        "the JavaScript client (npm-installed ES module): the same, plus calls in flight at once and the stream's end")
    func javascriptClient() async throws {
        let prefix = try await SDKInstall.nodePrefix()
        // In the prefix, so that `switchyard-sdk/client` resolves to the installed package.
        let script = prefix + "/control_client_check.mjs"
        try Self.write(
            String(decoding: try FileSystem.readFile("\(Self.fixtures)/control_client_check.mjs"), as: UTF8.self),
            to: script)
        let (host, socket) = try await Self.startDemoHost()
        let client = try CLIProcess(
            [script, socket, defaultControlSocketPath(app: "demo")], executable: TestPlugins.node)
        try await Self.expectSuccess(client, "control_client_check.mjs")
        #expect(try await host.waitForExit() == 0, "\(host.stderr.suffix(20))")
    }

    /// Writes `source` as `file` in the npm prefix (whose node_modules is found from the plugin's own folder upwards)
    /// and runs it as the root plugin of an app through `switchyard run`: the link `details/7`, then `script`'s
    /// lines. Returns the final tree.
    static func runInstalledNodePlugin(
        _ file: String, _ source: String, script: String = ""
    ) async throws -> TreeSnapshot {
        let prefix = try await SDKInstall.nodePrefix()
        let directory = try TestSweep.temporaryDirectory()
        try Self.write(source, to: prefix + "/" + file)
        try Self.write(
            #"{"app": "sdk-node", "root": {"plugin": "hello", "type": "hello"}, "plugins": [{"name": "hello", "command": ["node", "\#(prefix)/\#(file)"]}]}"#,
            to: directory + "/switchyard.json")
        try Self.write("switchyard://details/7\nexpect stack @root details\n" + script, to: directory + "/try.txt")
        let run = try CLIProcess([
            "run", "--manifest", directory + "/switchyard.json", "--script", directory + "/try.txt", "--json",
            "--no-socket",
        ])
        try await Self.expectSuccess(run, "switchyard run")
        return try lastTreeJSONLine(run.stdout)
    }

    @Test("a Node plugin that requires the npm-installed package runs through the host")
    func nodePluginFromInstalledPackage() async throws {
        let tree = try await Self.runInstalledNodePlugin(
            "hello-installed.js",
            """
            const { Plugin, Coordinator, screen, routes, version } = require('switchyard-sdk');
            class Hello extends Coordinator {
              static typeName = 'hello';
              static initial = 'greeting';
              static routes = [routes.root('greeting'), routes.push('details', { deepLink: 'details/:id', params: ['id'] })];
              greeting() { return screen('Greeting', { sdk: version }); }
              details(params) { return screen('Details', { id: params.id }); }
            }
            const plugin = new Plugin('hello-installed', '1.0.0');
            plugin.register(Hello);
            plugin.run();

            """)
        let version = try JSONParser.parse(
            String(decoding: try FileSystem.readFile(packageRoot + "/Protocol/sdk/node/package.json"), as: UTF8.self))[
                "version"]
        #expect(
            tree.instances.first?.root?.content
                == .screen(ScreenDescriptor(name: "Greeting", props: ["sdk": version ?? .null])))
        #expect(
            tree.instances.first?.entries?.last?.content
                == .screen(ScreenDescriptor(name: "Details", props: ["id": "7"])))
    }

    @Test(
        "a Node plugin written as an ES module imports the installed package (exports' import entry) and runs through the host"
    )
    func nodeModulePlugin() async throws {
        let tree = try await Self.runInstalledNodePlugin(
            "hello-module.mjs",
            """
            import { Plugin, Coordinator, screen, routes, reject, RPCError } from 'switchyard-sdk';
            import cjs from 'switchyard-sdk';
            class Hello extends Coordinator {
              static typeName = 'hello';
              static initial = 'greeting';
              static routes = [routes.root('greeting'), routes.push('details', { deepLink: 'details/:id', params: ['id'] })];
              greeting() { return screen('Greeting', { sameModule: RPCError === cjs.RPCError }); }
              async details({ id }) {
                await new Promise((resolve) => setImmediate(resolve));
                if (id === '0') throw reject('no details 0');
                return screen('Details', { id });
              }
            }
            const plugin = new Plugin('hello-module', '1.0.0');
            plugin.register(Hello);
            plugin.run();

            """, script: "expect error rejectedByGuard switchyard://details/0\n")
        // One module instance behind both entries: an RPCError of the ES module is the CommonJS one.
        #expect(
            tree.instances.first?.root?.content
                == .screen(ScreenDescriptor(name: "Greeting", props: ["sameModule": true])))
        #expect(
            tree.instances.first?.entries?.last?.content
                == .screen(ScreenDescriptor(name: "Details", props: ["id": "7"])))
    }

    /// The handshake and one route of a plugin whose factory reads a param that is not there, on its pipes.
    static let failingRoute =
        [
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersions":[1]}}"#,
            #"{"jsonrpc":"2.0","method":"initialized"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"coordinator/create","params":{"instance":5,"type":"bad","reason":"new"}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"coordinator/route","params":{"instance":5,"type":"bad","route":"item","params":{"id":"x"}}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"$/ping"}"#,
        ].joined(separator: "\n") + "\n"

    /// Sends ``failingRoute``, checks that request 3 failed with an `internalError` of `message` and `data.type`
    /// and that the plugin still answers; returns the error's `data`.
    static func failedRoute(_ plugin: CLIProcess, message: String, type: String) async throws -> JSONValue? {
        plugin.send(failingRoute)
        var answers: [JSONValue] = []
        for index in 0..<4 { answers.append(try JSONParser.parse(try await plugin.stdoutLine(index))) }
        #expect(
            answers.last?["id"] == 4 && answers.last?["result"] == .object([:]),
            "a failing handler must not stop the plugin")
        let answer = try #require(answers.first { $0["id"] == 3 }?["error"])
        plugin.closeStdin()
        #expect(try await plugin.waitForExit() == 0)
        let error = try #require(ResponseError(json: answer))
        #expect(error.code == .internalError)
        #expect(error.message == message)
        #expect(error.data?["type"] == .string(type))
        return error.data
    }

    @Test("a Python handler raising KeyError answers internalError with its traceback in data, and logs it to stderr")
    func pythonTraceback() async throws {
        let environment = try await SDKInstall.pythonEnvironment()
        let directory = try TestSweep.temporaryDirectory()
        try Self.write(
            """
            import switchyard
            from switchyard import screen
            plugin = switchyard.Plugin("bad", "0.1.0")
            @plugin.coordinator
            class Bad(switchyard.Coordinator):
                type_name = "bad"
                initial = "home"
                routes = [switchyard.root("home"), switchyard.push("item", params=["id"])]
                def home(self, params, link): return screen("Home")
                def item(self, params, link): return screen("Item", id=params["idd"])
            plugin.run()

            """, to: directory + "/bad.py")
        let plugin = try CLIProcess([directory + "/bad.py"], executable: environment + "/python3")
        let data = try await Self.failedRoute(
            plugin,
            message:
                #"route 'item' of bad: Bad.item raised KeyError: 'idd' (\#(directory)/bad.py:10, answering coordinator/route); fix it there (the traceback below), or raise switchyard.reject("why") to refuse the route on purpose"#,
            type: "KeyError")
        #expect(data?["handler"] == "Bad.item" && data?["file"] == .string("\(directory)/bad.py"))
        let traceback = try #require(data?["traceback"]?.stringValue)
        #expect(traceback.hasPrefix("Traceback (most recent call last):"))
        #expect(traceback.contains("bad.py\", line 10, in item"), "\(traceback)")
        #expect(traceback.hasSuffix("KeyError: 'idd'\n"))
        #expect(plugin.stderr.contains("switchyard: coordinator/route failed:"))
        #expect(plugin.stderr.contains("KeyError: 'idd'"))
    }

    @Test("a Node handler throwing answers internalError with its stack in data, and logs it to stderr")
    func nodeStack() async throws {
        let prefix = try await SDKInstall.nodePrefix()
        try Self.write(
            """
            const { Plugin, Coordinator, screen, routes } = require('switchyard-sdk');
            class Bad extends Coordinator {
              static typeName = 'bad';
              static initial = 'home';
              static routes = [routes.root('home'), routes.push('item', { params: ['id'] })];
              home() { return screen('Home'); }
              item(params) { return screen('Item', { id: params.missing.id }); }
            }
            const plugin = new Plugin('bad', '0.1.0');
            plugin.register(Bad);
            plugin.run();

            """, to: prefix + "/bad.js")
        let plugin = try CLIProcess([prefix + "/bad.js"], executable: TestPlugins.node)
        let data = try await Self.failedRoute(
            plugin,
            message:
                "route 'item' of bad: Bad.item threw TypeError: Cannot read properties of undefined (reading 'id') (\(prefix)/bad.js:7, answering coordinator/route); fix it there (the stack below), or throw reject('why') to refuse the route on purpose",
            type: "TypeError")
        #expect(data?["handler"] == "Bad.item" && data?["file"] == .string("\(prefix)/bad.js"))
        let stack = try #require(data?["stack"]?.stringValue)
        #expect(stack.hasPrefix("TypeError: Cannot read properties of undefined"))
        #expect(stack.contains("at Bad.item (\(prefix)/bad.js:7:"), "\(stack)")
        #expect(plugin.stderr.contains("switchyard: coordinator/route failed:"))
        #expect(plugin.stderr.contains { $0.contains("at Bad.item") })
    }

    @Test(
        "the Python client refuses a server of another user (SO_PEERCRED); the Node client refuses a socket it does not own",
        .enabled(
            if: getuid() == 0 && FileSystem.exists("/usr/bin/setpriv") && FileSystem.exists("/usr/bin/python3"),
            "needs root, setpriv and /usr/bin/python3 to run a client as nobody"))
    func otherUsersServer() async throws {
        // A folder anyone may traverse, holding the socket (opened up by mistake) and copies of the clients that
        // nobody can read whatever the checkout's permissions.
        let directory = try TestSweep.temporaryDirectory(mode: 0o755)
        let socket = directory + "/demo.sock"
        try FileSystem.makeDirectory(directory + "/switchyard", mode: 0o755)
        try FileSystem.setPermissions(directory + "/switchyard", 0o755)
        let package = packageRoot + "/Protocol/sdk/python/switchyard"
        for file in FileSystem.listDirectory(package) where file.hasSuffix(".py") {
            try FileSystem.writeFileAtomically(
                "\(directory)/switchyard/\(file)", FileSystem.readFile("\(package)/\(file)"), mode: 0o644)
        }
        try FileSystem.writeFileAtomically(
            directory + "/client.mjs", FileSystem.readFile(packageRoot + "/Protocol/sdk/node/client.mjs"), mode: 0o644)
        let host = try CLIProcess(["run", "--socket", socket])
        try await host.waitForStderr("switchyard: ready")
        try FileSystem.setPermissions(socket, 0o666)
        let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]

        let python = try CLIProcess(
            asNobody + [
                "/usr/bin/python3", "-c", "from switchyard.client import ControlClient; ControlClient('\(socket)')",
            ],
            executable: "/usr/bin/setpriv", environment: ["PYTHONPATH": directory], currentDirectory: directory)
        python.closeStdin()
        #expect(try await python.waitForExit() != 0)
        #expect(
            python.stderr.contains { $0.contains("runs as uid 0") && $0.contains("refusing to talk to it") },
            "\(python.stderr)")

        let node = try CLIProcess(
            asNobody + [
                TestPlugins.node, "--input-type=module", "-e",
                "import { ControlClient } from '\(directory)/client.mjs'; await ControlClient.connect({ path: '\(socket)' });",
            ],
            executable: "/usr/bin/setpriv", currentDirectory: directory)
        node.closeStdin()
        #expect(try await node.waitForExit() != 0)
        #expect(
            node.stderr.contains { $0.contains("belongs to uid 0") && $0.contains("refusing to talk to the server") },
            "\(node.stderr)")

        host.signal(SIGTERM)
        #expect(try await host.waitForExit() == 0)
    }

    @Test("the packages' versions follow the protocol: major = the newest protocol version, the same in every file")
    func versions() throws {
        func text(_ path: String) throws -> String {
            String(decoding: try FileSystem.readFile(packageRoot + "/" + path), as: UTF8.self)
        }
        func quoted(after prefix: String, in text: String) -> String? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
            return line.split(separator: "\"").dropFirst().first.map(String.init)
        }
        let pyproject = quoted(after: "version = ", in: try text("Protocol/sdk/python/pyproject.toml"))
        let module = quoted(after: "__version__ = ", in: try text("Protocol/sdk/python/switchyard/__init__.py"))
        let package = try JSONParser.parse(try text("Protocol/sdk/node/package.json"))["version"]?.stringValue
        let newest = try #require(ProtocolVersion.supported.max())
        #expect(pyproject != nil && pyproject == module && module == package, "\([pyproject, module, package])")
        #expect(pyproject?.split(separator: ".").first == Substring(String(newest)))
    }
}
