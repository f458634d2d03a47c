import Foundation
import SwitchyardHostTestSupport
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Issue 30, item 5: a route method an author wrote in Python or Node that raises, forgets `return`, or returns what
/// JSON cannot carry used to surface as the SDK's exception or the host's check of the answer ("invalid params …
/// expected an object, found null"), without the route. Through the real host and real plugin processes, the error a
/// user sees names the route, the type, the method with its file and line, the host's method, and the fix in the
/// plugin's language.
@Suite("the first hour: errors at the SDK boundary name the author's code", .heavy, .timeLimit(.minutes(2)))
struct HandlerErrorTests {
    /// A route method with a mistake (the route is `settings`), and the error line the CLI must print.
    typealias Slip = DeclarationCheckTests.Mistake

    // In `DeclarationCheckTests.python`'s source the methods start on line 10, in its `node` source on line 7.

    static func python(_ route: String, _ method: String) -> String {
        DeclarationCheckTests.python(routes: #"switchyard.push("\#(route)")"#, methods: method)
    }

    static func node(_ route: String, _ method: String) -> String {
        DeclarationCheckTests.node(routes: "routes.push('\(route)')", methods: method)
    }

    static let failed = "switchyard: error: stdin:1: internalError (-32603): "

    static let slips = [
        Slip(
            id: "python-no-return", file: "profile.py",
            source: python("settings", #"def settings(self, params, link): screen("Settings")"#),
            error: failed
                + #"route 'settings' of profile: Profile.settings returned None (is `return` missing?) instead of a screen or a coordinator (DIR/profile.py:10, answering coordinator/route); end it with return screen("Name", key=value) or return coordinator("type")"#
        ),
        Slip(
            id: "python-raises", file: "profile.py",
            source: python(
                "settings",
                "def settings(self, params, link):\n        user = params[\"user\"]\n        return screen(user)"),
            error: failed
                + #"route 'settings' of profile: Profile.settings raised KeyError: 'user' (DIR/profile.py:11, answering coordinator/route); fix it there (the traceback below), or raise switchyard.reject("why") to refuse the route on purpose"#
        ),
        Slip(
            id: "python-async-raises", file: "profile.py",
            source: python("settings", #"async def settings(self, params, link): raise ValueError("no settings yet")"#),
            error: failed
                + #"route 'settings' of profile: Profile.settings raised ValueError: no settings yet (DIR/profile.py:10, answering coordinator/route); fix it there (the traceback below), or raise switchyard.reject("why") to refuse the route on purpose"#
        ),
        Slip(
            id: "python-nan", file: "profile.py",
            source: python(
                "settings", #"def settings(self, params, link): return screen("Settings", score=float("nan"))"#),
            error: failed
                + "route 'settings' of profile: Profile.settings returned an answer that cannot be sent: result.content.screen.props.score is NaN, which JSON cannot carry (RFC 8259) (DIR/profile.py:10, answering coordinator/route)"
        ),
        Slip(
            id: "node-no-return", file: "profile.js",
            source: node("settings", "settings() {\n    screen('Settings');\n  }"),
            error: failed
                + "route 'settings' of profile: Profile.settings returned undefined (is `return` missing?) instead of a screen or a coordinator (DIR/profile.js:7, answering coordinator/route); end it with return screen('Name', { key: value }) or return coordinator('type')"
        ),
        Slip(
            id: "node-throws", file: "profile.js",
            source: node(
                "settings", "settings(params) {\n    const name = params.user.name;\n    return screen(name);\n  }"),
            error: failed
                + "route 'settings' of profile: Profile.settings threw TypeError: Cannot read properties of undefined (reading 'name') (DIR/profile.js:8, answering coordinator/route); fix it there (the stack below), or throw reject('why') to refuse the route on purpose"
        ),
        Slip(
            id: "node-bigint", file: "profile.js",
            source: node("settings", "settings() { return screen('Settings', { count: 10n }); }"),
            error: failed
                + "route 'settings' of profile: Profile.settings returned an answer that cannot be sent: TypeError: Do not know how to serialize a BigInt (DIR/profile.js:7, answering coordinator/route)"
        ),
    ]

    /// An action handler that returns one step instead of a list of them, the route's screen declaring `save`.
    static let actionSlips = [
        Slip(
            id: "python-action-not-a-list", file: "profile.py",
            source: DeclarationCheckTests.python(
                routes: #"switchyard.push("settings", actions=["save"])"#,
                methods:
                    "def settings(self, params, link): return screen(\"Settings\")\n    def action(self, name, params, route, entry): return {\"op\": \"pop\"}"
            ),
            error: "switchyard: error: stdin:2: internalError (-32603): "
                + "action 'save' of profile (on route 'settings'): Profile.action returned {'op': 'pop'} instead of a list of steps or None (DIR/profile.py:11, answering coordinator/action); end it with return [step, ...] or return None"
        ),
        Slip(
            id: "node-action-not-an-array", file: "profile.js",
            source: DeclarationCheckTests.node(
                routes: "routes.push('settings', { actions: ['save'] })",
                methods: "settings() { return screen('Settings'); }\n  action(name) { return { op: 'pop' }; }"),
            error: "switchyard: error: stdin:2: internalError (-32603): "
                + #"action 'save' of profile (on route 'settings'): Profile.action returned {"op":"pop"} instead of an array of steps or nothing (DIR/profile.js:8, answering coordinator/action); end it with return [step, ...] or return null"#
        ),
    ]

    /// An `initial_root` hook that returns the route's name alone instead of a pair: the root cannot be created.
    static let rootSlips = [
        Slip(
            id: "python-initial-root-not-a-pair", file: "profile.py",
            source: DeclarationCheckTests.python(
                routes: #"switchyard.push("settings")"#,
                methods:
                    "def settings(self, params, link): return screen(\"Settings\")\n    def initial_root(self): return \"overview\""
            ),
            error:
                "switchyard: error: the app cannot start: internalError (-32603): cannot create the root profile.profile: "
                + #"the initial root of profile: Profile.initial_root returned 'overview' instead of a (route, params) pair (DIR/profile.py:11, answering coordinator/create); end it with return "route", None (or declare initial = "route")"#
        ),
        Slip(
            id: "node-initial-root-not-a-pair", file: "profile.js",
            source: DeclarationCheckTests.node(
                routes: "routes.push('settings')",
                methods: "settings() { return screen('Settings'); }\n  initialRoot() { return 'overview'; }"),
            error:
                "switchyard: error: the app cannot start: internalError (-32603): cannot create the root profile.profile: "
                + #"the initial root of profile: Profile.initialRoot returned "overview" instead of a [route, params] pair (DIR/profile.js:8, answering coordinator/create); end it with return ['route', undefined] (or declare static initial = 'route')"#
        ),
    ]

    @Test(
        "taking the route fails (status 1) with the route, the type, the method, its file and line, the host's method and the fix",
        arguments: slips)
    func named(_ slip: Slip) async throws {
        let error = try await Self.failure(slip, script: "nav @root route settings\n")
        #expect(error == slip.error)
        if slip.id == "python-no-return" {
            try Troubleshooting.check(
                "route-method-no-return", error ?? "", replacing: [("DIR", "/home/me/myapp")])
        }
    }

    @Test(
        "an action handler's answer that is not a list of steps fails (status 1), naming the action, the route and the handler",
        arguments: actionSlips)
    func actionNamed(_ slip: Slip) async throws {
        let error = try await Self.failure(slip, script: "nav @root route settings\naction @root top save\n")
        #expect(error == slip.error)
    }

    @Test(
        "an initial-root hook whose answer is not a (route, params) pair: the app cannot start (69), naming the hook, its file and line, and the fix",
        arguments: rootSlips)
    func rootNamed(_ slip: Slip) async throws {
        let error = try await Self.failure(slip, script: "", status: 69)
        #expect(error == slip.error)
    }

    /// Runs the slip's app on `script`, expecting `status`; the first error line, its folder written `DIR`.
    static func failure(_ slip: Slip, script: String, status expected: Int32 = 1) async throws -> String? {
        let directory = try DeclarationCheckTests.app(file: slip.file, source: slip.source)
        let run = try CLIProcess(
            ["run", "--manifest", "switchyard.json", "--no-socket", "--script", "-"], currentDirectory: directory)
        run.send(script)
        run.closeStdin()
        let status = try await run.waitForExit()
        let stderr = run.stderr.joined(separator: "\n")
        #expect(status == expected, "\(stderr)")
        // The folder as the plugin sees it (a symbolic link of /tmp may resolve elsewhere).
        let folder = FileSystem.realPath(directory) ?? directory
        let error = run.stderr.first { $0.hasPrefix("switchyard: error:") }
        return error?.replacingOccurrences(of: folder, with: "DIR").replacingOccurrences(of: directory, with: "DIR")
    }
}
