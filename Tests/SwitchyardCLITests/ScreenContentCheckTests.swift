import SwitchyardHostTestSupport
import SwitchyardTestSupport
import Testing

/// `check-plugin` on a plugin whose screens a host would refuse (Protocol/README.md §21): it reports what the host
/// would say, before any app runs the plugin.
@Suite("check-plugin on screens as data", .heavy, .timeLimit(.minutes(3)))
struct ScreenContentCheckTests {
    static let fixture = "\(packageRoot)/Tests/Fixtures/plugins/bad_screens.py"

    @Test("check-plugin reports content a host would refuse, naming the element's path and the limit")
    func checkPluginReportsContent() async throws {
        let run = try await CheckPluginTests.check(["--json", "--", TestPlugins.python, Self.fixture])
        #expect(run.status == 1, "\(run.transcript)")
        #expect(try run.ids("FAIL").contains("route"), "\(run.transcript)")
        #expect(try run.ids("PASS").isSuperset(of: ["handshake", "create", "messages"]), "\(run.transcript)")
        let text = run.stdout.joined(separator: "\n")
        #expect(text.contains("content[1].action.name"), "\(run.transcript)")
        #expect(text.contains("maxScreenElements"), "\(run.transcript)")
    }
}
