import Foundation
import SwitchyardHostTestSupport
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Issue 15, "composition and plugins": a route declared without its method, or with a deep-link capture its params
/// do not declare, used to pass the handshake and fail only when taken ("routeNotFound: profile has no route
/// 'settings'"). The Python and Node SDKs refuse it at start-up, through the real host: the handshake fails with the
/// type, the route and the method to write, the one line a user sees by default. (The Swift SDK's side is in
/// SwitchyardPluginTests' `DeclarationCheckTests`: a route without its factory does not compile there.)
@Suite(
    "the first hour: the SDKs refuse a route without its method, or a capture its params lack", .heavy,
    .timeLimit(.minutes(2)))
struct DeclarationCheckTests {
    /// A plugin source with its mistakes, and the handshake failure the host must log for it.
    struct Mistake: Sendable, CustomTestStringConvertible {
        let id: String
        let file: String
        let source: String
        let error: String
        var testDescription: String { id }
    }

    static let pythonSDK = packageRoot + "/Protocol/sdk/python/switchyard"
    static let nodeSDK = packageRoot + "/Protocol/sdk/node/switchyard.js"

    /// The tutorial's profile plugin in Python, with these routes after its root and these methods after its own.
    static func python(routes: String, methods: String) -> String {
        """
        import switchyard
        from switchyard import screen
        plugin = switchyard.Plugin("profile", "1.0.0")
        @plugin.coordinator
        class Profile(switchyard.Coordinator):
            type_name = "profile"
            initial = "overview"
            routes = [switchyard.root("overview"), \(routes)]
            def overview(self, params, link): return screen("Profile")
            \(methods)
        plugin.run()

        """
    }

    /// The same in Node.
    static func node(routes: String, methods: String) -> String {
        """
        const { Plugin, Coordinator, screen, routes } = require('\(nodeSDK)');
        class Profile extends Coordinator {
          static typeName = 'profile';
          static initial = 'overview';
          static routes = [routes.root('overview'), \(routes)];
          overview() { return screen('Profile'); }
          \(methods)
        }
        const plugin = new Plugin('profile', '1.0.0');
        plugin.register(Profile);
        plugin.run();

        """
    }

    static let refusal = "ERROR [profile] plugin 'profile' failed the handshake: "

    static let mistakes = [
        // A newly declared route whose method was forgotten.
        Mistake(
            id: "python-method", file: "profile.py",
            source: python(routes: #"switchyard.push("settings", deep_link="settings")"#, methods: ""),
            error: refusal
                + "profile: route 'settings' is declared but the class Profile has no method 'settings' (def settings(self, params, link): ...)"
        ),
        Mistake(
            id: "python-capture", file: "profile.py",
            source: python(
                routes: #"switchyard.push("item", deep_link="item/:id", params=[])"#,
                methods: #"def item(self): return screen("Item")"#),
            error: refusal
                + "profile: route 'item': method 'item' takes (self), but is called with the route's params and the deep link (def item(self, params, link): ...); "
                + "profile: route 'item': deep-link pattern 'item/:id' captures 'id', but the route declares no params: add 'id' to params=[...] or drop the capture"
        ),
        // A route named like a URL segment: the hint must be Python, which has no method `sign-out`.
        Mistake(
            id: "python-dashed-name", file: "profile.py",
            source: python(routes: #"switchyard.push("sign-out")"#, methods: ""),
            error: refusal
                + #"profile: route 'sign-out' is declared but a Python method cannot be named 'sign-out': override content_for(self, route, params, link=None), which is called with route == "sign-out", or rename the route (for example 'sign_out')"#
        ),
        Mistake(
            id: "node-method", file: "profile.js",
            source: node(routes: "routes.push('settings', { deepLink: 'settings' })", methods: ""),
            error: refusal
                + "profile: route 'settings' is declared but the class Profile has no method 'settings' (settings(params, link) { ... })"
        ),
        // In JavaScript a class method may have that name, quoted.
        Mistake(
            id: "node-dashed-name", file: "profile.js",
            source: node(routes: "routes.push('sign-out')", methods: ""),
            error: refusal
                + "profile: route 'sign-out' is declared but the class Profile has no method 'sign-out' ('sign-out'(params, link) { ... })"
        ),
        Mistake(
            id: "node-capture", file: "profile.js",
            source: node(
                routes:
                    "routes.push('item', { deepLink: 'item/:id' }), routes.push('order', { deepLink: 'order/:id', params: ['orderId'] })",
                methods:
                    "item() { return screen('Item'); }\n  order(params) { return screen('Order', { id: params.orderId }); }"
            ),
            error: refusal
                + "profile: route 'item': deep-link pattern 'item/:id' captures 'id', but method 'item' takes no parameters (item(params, link) { ... }); "
                + "profile: route 'order': deep-link pattern 'order/:id' captures 'id', but the route declares only 'orderId': add 'id' to params: [...] or drop the capture"
        ),
    ]

    /// A folder holding the plugin `file` (Python or Node, by its extension) and a manifest whose root it is.
    static func app(file: String, source: String) throws -> String {
        let directory = try TestSweep.temporaryDirectory()
        try FileSystem.writeFileAtomically(directory + "/" + file, Array(source.utf8), mode: 0o600)
        // As Plugins/python has it: the SDK package beside the plugin, found without any path hack.
        try FileManager.default.createSymbolicLink(atPath: directory + "/switchyard", withDestinationPath: pythonSDK)
        let interpreter = file.hasSuffix(".py") ? "python3" : TestPlugins.node
        try FileSystem.writeFileAtomically(
            directory + "/switchyard.json",
            Array(
                #"{"app": "myapp", "root": {"plugin": "profile", "type": "profile"}, "plugins": [{"name": "profile", "command": ["\#(interpreter)", "\#(file)"]}]}"#
                    .utf8),
            mode: 0o600)
        return directory
    }

    @Test(
        "the plugin's handshake fails naming the type, the route and the method to write; the app without its root cannot start (69)",
        arguments: mistakes)
    func refused(_ mistake: Mistake) async throws {
        let directory = try Self.app(file: mistake.file, source: mistake.source)
        let result = try await runSwitchyard(["run", "--manifest", "switchyard.json", "--no-socket"], in: directory)
        #expect(result.status == 69, "\(result.errorText)")
        // The plugin's own stderr line comes first (plugin stderr is shown by default); the first error is the host's.
        #expect(result.stderr.first { $0.hasPrefix("ERROR") } == mistake.error, "\(result.errorText)")
        if mistake.id == "python-method" { try Troubleshooting.check("route-without-method", mistake.error) }
    }

    @Test("the plugin run by hand says it at once on stderr, before any message from a host")
    func byHand() async throws {
        let mistake = try #require(Self.mistakes.first { $0.id == "python-method" })
        let directory = try TestSweep.temporaryDirectory()
        try FileSystem.writeFileAtomically(directory + "/profile.py", Array(mistake.source.utf8), mode: 0o600)
        try FileManager.default.createSymbolicLink(
            atPath: directory + "/switchyard", withDestinationPath: Self.pythonSDK)
        let plugin = try CLIProcess(["python3", directory + "/profile.py"], executable: "/usr/bin/env")
        try await plugin.waitForStderr(
            "switchyard: error: profile: route 'settings' is declared but the class Profile has no method 'settings'")
        plugin.closeStdin()
        #expect(try await plugin.waitForExit() == 0)
    }
}
