import Glibc
import SwitchyardSystem
import SwitchyardClient
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardTestSupport
import SwitchyardUV
import Testing

/// `async def` (Python) and `async` (Node) handlers in a real app: `switchyard run` as a process, the fixture plugin
/// (`Tests/Fixtures/plugins/async_handlers.py` / `.js`) as its child on real pipes, driven through the control socket.
/// Each language's fixture awaits before it answers, refuses from a guard after an await, fails after an await, and
/// awaits a `navigate` of its own from a task started by a handler.
@Suite("async handlers in the Python and Node SDKs, through the real host", .heavy, .timeLimit(.minutes(2)))
struct AsyncHandlerTests {
    static let fixtures = packageRoot + "/Tests/Fixtures/plugins"

    static func fixture(_ language: String) -> String {
        "\(fixtures)/async_handlers.\(language == "python" ? "py" : "js")"
    }

    /// Runs the shop app on `language`'s fixture, connects a control client, runs `body`; the host is stopped (and
    /// must exit cleanly) when `body` returns, and killed when it throws.
    static func withShop(_ language: String, _ body: (CLIProcess, ControlClient) async throws -> Void) async throws {
        let directory = try TestSweep.temporaryDirectory()
        let interpreter = language == "python" ? TestPlugins.python : TestPlugins.node
        let manifest =
            #"{"app": "shop", "root": {"plugin": "shop", "type": "shop"}, "plugins": [{"name": "shop", "command": ["\#(interpreter)", "\#(fixture(language))"]}]}"#
        try FileSystem.writeFileAtomically(directory + "/switchyard.json", Array(manifest.utf8), mode: 0o600)
        let socket = directory + "/shop.sock"
        let host = try CLIProcess(["run", "--manifest", directory + "/switchyard.json", "--socket", socket])
        do {
            try await host.waitForStderr("switchyard: ready")
            let client = try ControlClient(path: socket)
            defer { client.close() }
            try await body(host, client)
        } catch {
            host.signal(SIGKILL)
            _ = try? await host.waitForExit()
            throw error
        }
        host.signal(SIGTERM)
        #expect(try await host.waitForExit() == 0, "\(host.stderr.suffix(20))")
    }

    /// The shop's top entry: its route and its content.
    static func top(_ client: ControlClient) throws -> (route: String?, content: JSONValue?) {
        let tree = try client.call("tree/get")
        let shop = tree["instances"]?.arrayValue?.first { $0["type"] == "shop" }
        let top = shop?["entries"]?.arrayValue?.last ?? shop?["root"]
        return (top?["route"]?.stringValue, top?["content"])
    }

    /// `open(url)`'s refusal; records an issue if it succeeded.
    static func refusal(_ client: ControlClient, _ url: String) throws -> ResponseError? {
        switch try client.response("open", ["url": .string(url)]) {
        case .success(let result):
            Issue.record("\(url) was applied: \(result)")
            return nil
        case .failure(let error): return error
        }
    }

    @Test(
        "an awaited route answers its screen; a guard refusing after an await is rejectedByGuard and changes nothing",
        arguments: ["python", "node"])
    func awaitedRouteAndGuard(language: String) async throws {
        try await Self.withShop(language) { _, client in
            // The root itself came from an async method, at creation.
            #expect(try Self.top(client).content == .object(["screen": ["name": "Shop"]]))
            let opened = try client.call("open", ["url": "switchyard://item/1"])
            #expect(try Self.top(client).route == "item")
            #expect(try Self.top(client).content == .object(["screen": ["name": "Item", "props": ["name": "tea"]]]))

            let refused = try #require(try Self.refusal(client, "switchyard://item/9"))
            #expect(refused.code == .rejectedByGuard)
            #expect(refused.message == "there is no item 9")
            #expect(try client.call("tree/get")["revision"] == opened["revision"], "a refused link changes nothing")
        }
    }

    @Test(
        "an async handler that fails after an await answers internalError with its traceback or stack in data",
        arguments: ["python", "node"])
    func failureAfterAwait(language: String) async throws {
        let source = String(decoding: try FileSystem.readFile(Self.fixture(language)), as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(source.firstIndex { $0.contains("[99]") || $0.contains("get(99)") }) + 1
        try await Self.withShop(language) { host, client in
            let error = try #require(try Self.refusal(client, "switchyard://broken"))
            #expect(error.code == .internalError)
            if language == "python" {
                #expect(
                    error.message.hasPrefix(
                        "route 'broken' of shop: Shop.broken raised KeyError: 99 (\(Self.fixture(language)):\(line), answering coordinator/route)"
                    ), "\(error.message)")
                #expect(error.data?["type"] == "KeyError")
                let traceback = try #require(error.data?["traceback"]?.stringValue)
                #expect(traceback.contains("async_handlers.py\", line \(line), in broken"), "\(traceback)")
                #expect(traceback.hasSuffix("KeyError: 99\n"))
            } else {
                #expect(
                    error.message.hasPrefix(
                        "route 'broken' of shop: Shop.broken threw TypeError: Cannot read properties of undefined (reading 'toUpperCase') (\(Self.fixture(language)):\(line), answering coordinator/route)"
                    ), "\(error.message)")
                #expect(error.data?["type"] == "TypeError")
                let stack = try #require(error.data?["stack"]?.stringValue)
                #expect(stack.contains("at Shop.broken (\(Self.fixture(language)):\(line):"), "\(stack)")
            }
            // The plugin goes on serving.
            _ = try client.call("open", ["url": "switchyard://item/2"])
            #expect(try Self.top(client).content == .object(["screen": ["name": "Item", "props": ["name": "cake"]]]))
            #expect(host.stderr.contains { $0.contains("coordinator/route failed") })
        }
    }

    @Test(
        "a task started by a handler awaits the plugin's own navigate, sent after the answer, and gets its revision",
        arguments: ["python", "node"])
    func awaitedNavigate(language: String) async throws {
        try await Self.withShop(language) { host, client in
            let opened = try client.call("open", ["url": "switchyard://checkout"])
            let revision = try #require(opened["revision"]?.intValue)
            // The plugin pops the checkout itself, then logs the revision its navigate produced.
            try await host.waitForStderr("shop: left the checkout, revision \(revision + 1)")
            #expect(try Self.top(client).content == .object(["screen": ["name": "Shop"]]))
        }
    }

    @Test("Python: a NaN in an answer is internalError naming the field, never a line the host cannot parse")
    func pythonNaN() async throws {
        try await Self.withShop("python") { host, client in
            let error = try #require(try Self.refusal(client, "switchyard://score"))
            #expect(error.code == .internalError)
            #expect(
                error.message.contains("result.content.screen.props.value is NaN, which JSON cannot carry"),
                "\(error.message)")
            #expect(error.data?["type"] == "InvalidJSON")
            #expect(error.data?["field"] == "result.content.screen.props.value")
            #expect(
                !host.stderr.contains { $0.contains("parseError") || $0.contains("protocol error") }, "\(host.stderr)")
        }
    }

    @Test("Node: an async deep-link resolver (customDeepLinks) takes the link")
    func nodeAsyncDeepLinkResolver() async throws {
        try await Self.withShop("node") { _, client in
            _ = try client.call("open", ["url": "switchyard://vault/7"])
            let tree = try client.call("tree/get")
            let vault = try #require(tree["instances"]?.arrayValue?.first { $0["type"] == "vault" })
            #expect(
                vault["entries"]?.arrayValue?.last?["content"]
                    == .object(["screen": ["name": "Box", "props": ["number": "7"]]]))
        }
    }
}
