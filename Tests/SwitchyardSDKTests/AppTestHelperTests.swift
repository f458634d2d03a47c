import SwitchyardHostTestSupport
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The Python and Node SDKs' exhaustive navigation test helpers (`switchyard.testing.AppTest`,
/// `switchyard-sdk/testing`'s `AppTest`), each over a real host: the demo's Python plugins tested with pytest, its
/// Node plugin with node:test (Tests/Fixtures/apptest), including a test that shows an unasserted change failing the
/// next action with a readable diff, and a wrong expectation failing with both trees diffed.
@Suite("The SDKs' AppTest helpers over a real host", .heavy, .timeLimit(.minutes(3)))
struct AppTestHelperTests {
    static let fixtures = packageRoot + "/Tests/Fixtures/apptest"

    /// What the fixtures need: the CLI and the demo's manifest. The hosts they start are their children, not this
    /// process's: they watch the fixture's process, not this one.
    static let environment = [
        "SWITCHYARD": product("switchyard"), "SWITCHYARD_DEMO_MANIFEST": packageRoot + "/Plugins/demo/switchyard.json",
        "PYTHONPATH": packageRoot + "/Protocol/sdk/python", "SWITCHYARD_EXIT_WITH_PARENT": "",
    ]

    static func run(_ executable: String, _ arguments: [String]) async throws -> (Int32, [String]) {
        let process = try CLIProcess(
            arguments, executable: executable, environment: environment, currentDirectory: fixtures)
        process.closeStdin()
        let status = try await process.waitForExit(seconds: 150)
        return (status, process.stdout + process.stderr)
    }

    @Test("pytest: the demo's Python plugins, every change and notification asserted")
    func python() async throws {
        let (status, output) = try await Self.run(
            TestPlugins.python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_demo_python.py"])
        #expect(status == 0, "\(output.joined(separator: "\n"))")
        #expect(output.contains { $0.contains("6 passed") }, "\(output.joined(separator: "\n"))")
    }

    @Test("node --test: the demo's Node plugin, every change and notification asserted")
    func node() async throws {
        let (status, output) = try await Self.run(TestPlugins.node, ["--test", "demo_node.test.mjs"])
        #expect(status == 0, "\(output.joined(separator: "\n"))")
        #expect(output.contains("# pass 3") && output.contains("# fail 0"), "\(output.joined(separator: "\n"))")
    }
}
