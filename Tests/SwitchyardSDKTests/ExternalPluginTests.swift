import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Feature modules are built independently: a plugin in its own package, depending only on the SDK product, joins
/// the demo app through a manifest and replaces one of its plugins.
// Alone: it builds a package from scratch (the compiler takes both cores), and the suites that judge timing must
// never run beside a compiler.
@Suite("A plugin built in a separate package", .heavyAlone, .timeLimit(.minutes(10)))
struct ExternalPluginTests {
    @Test("Plugins/external/ProfilePlugin builds on its own and serves the profile tab of the demo app")
    func separatePackage() async throws {
        let package = packageRoot + "/Plugins/external/ProfilePlugin"
        // A fresh build, as on a new machine (and as the manifest expects it, in the package's own .build): an
        // incremental build of a path dependency whose files were added or moved since has failed with "missing
        // inputs" (SwiftPM keeps the old file list).
        let build = try await onThreadOfItsOwn {
            _ = try SystemProcess.run(["rm", "-rf", package + "/.build"], timeoutMilliseconds: 60_000)
            return try SystemProcess.run(["swift", "build", "--package-path", package], timeoutMilliseconds: 540_000)
        }
        try #require(build.status == 0, "swift build of the external package failed:\n\(build.text)")
        // Its Package.swift names one dependency, the SDK product; nothing else of this package is linked.
        let manifest = String(decoding: try FileSystem.readFile(package + "/Package.swift"), as: UTF8.self)
        #expect(manifest.contains(#".product(name: "SwitchyardPlugin", package: "Switchyard")"#))
        #expect(!manifest.contains("SwitchyardHost") && !manifest.contains("SwitchyardUV"))

        let process = try CLIProcess([
            "run", "--manifest", "Plugins/external/switchyard.json", "--script", "-", "--json", "--no-socket",
            "--log-level", "info",
        ])
        process.send(
            """
            nav @root setRoot authenticated {"user":"alice"}
            switchyard://profile/sign-out
            expect top profile.profile
            nav profile.profile dismiss
            switchyard://profile/settings

            """)
        process.closeStdin()
        #expect(try await process.waitForExit(seconds: 60) == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        #expect(process.stderr.contains("NOTICE [profile] signOut dismissed (navigation)"))
        guard let line = process.stdout.last(where: { $0.hasPrefix("{") }) else {
            Issue.record("no JSON snapshot:\n\(process.stdout.joined(separator: "\n"))")
            return
        }
        let tree = try JSONValueDecoder().decode(TreeSnapshot.self, from: JSONParser.parse(line))
        let profile = try #require(tree.instances.first { $0.plugin == "profile" })
        #expect(
            profile.root?.content
                == .screen(ScreenDescriptor(name: "Profile", props: ["team": "profile", "language": "swift"])))
        #expect(profile.entries?.map(\.route) == ["settings"])
        #expect(tree.instances.first { $0.type == "home" }?.selectedTab == "profile")
    }
}
