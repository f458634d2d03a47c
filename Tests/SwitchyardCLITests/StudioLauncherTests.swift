import Foundation
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// `switchyard studio` in a source checkout starts the Studio package's build there (`.build/studio`), before any
/// `switchyard-studio` beside it, and builds it again when it is older than the CLI: a checkout pulled and rebuilt
/// must not start the Studio of before the pull, nor one an older layout left beside the CLI.
@Suite("switchyard studio picks its checkout's Studio, and a stale one is built again", .heavy, .timeLimit(.minutes(3)))
struct StudioLauncherTests {
    /// A checkout as the launcher sees one: `Sources/Studio/Package.swift` (not a manifest: a build of it fails
    /// at once), the CLI under `.build/<triple>/debug`, a Studio under `.build/studio/debug` and a stale
    /// `switchyard-studio` beside the CLI, each Studio a script printing which one it is, as a studio prints its URL.
    /// The files' modification times are set to the given seconds ago.
    static func checkout(
        studio studioAge: Int, cli cliAge: Int, source sourceAge: Int
    ) throws -> (
        cli: String, root: String
    ) {
        let root = try TestSweep.temporaryDirectory()
        let products = "\(root)/.build/x86_64-unknown-linux-gnu/debug"
        for folder in ["\(root)/Sources/Studio", products, "\(root)/.build/studio/debug"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let source = "\(root)/Sources/Studio/Package.swift"
        try FileSystem.createFile(source, Array("this is not a manifest\n".utf8))
        func studio(_ path: String, _ name: String) throws {
            let script = "#!/bin/sh\necho \"switchyard studio: http://127.0.0.1:9/\(name)/\"\ncat > /dev/null\n"
            try FileSystem.createFile(path, Array(script.utf8), mode: 0o755)
        }
        let cli = "\(products)/switchyard", checkoutStudio = "\(root)/.build/studio/debug/switchyard-studio"
        // Under the spawn lock, so no child forked meanwhile holds a file open for writing (ETXTBSY at its exec).
        try SpawnLock.withLock {
            try studio("\(products)/switchyard-studio", "beside")
            try studio(checkoutStudio, "checkout")
            try FileManager.default.copyItem(atPath: product("switchyard"), toPath: cli)
        }
        let now = Int(Date().timeIntervalSince1970)
        try FileSystem.touch(checkoutStudio, secondsSinceEpoch: now - studioAge)
        try FileSystem.touch(cli, secondsSinceEpoch: now - cliAge)
        try FileSystem.touch(source, secondsSinceEpoch: now - sourceAge)
        return (cli, root)
    }

    static func studio(_ cli: String, _ root: String) throws -> CLIProcess {
        try CLIProcess(
            ["studio", "--socket", "\(root)/host.sock", "--port", "0", "--wait"], executable: cli,
            environment: ["SWITCHYARD_STUDIO": ""])
    }

    @Test("a Studio newer than the CLI is started as it is, and one beside the CLI is not")
    func newerStudio() async throws {
        let (cli, root) = try Self.checkout(studio: 50, cli: 100, source: 200)
        let process = try Self.studio(cli, root)
        defer { process.signal(SIGKILL) }
        try await process.waitForStdout("http://127.0.0.1:9/checkout/")
        #expect(!process.stdout.contains { $0.contains("/beside/") }, "\(process.stdout)")
        #expect(!process.stderr.contains { $0.contains("building") }, "\(process.stderr)")
        process.signal(SIGTERM)
        _ = try await process.waitForExit()
    }

    @Test(
        "a Studio older than the CLI, or than a file of Sources/Studio, is built again; a build that fails says so with its command (status 69)",
        arguments: [(studio: 100, cli: 50, source: 200), (studio: 100, cli: 200, source: 50)])
    func olderStudio(ages: (studio: Int, cli: Int, source: Int)) async throws {
        let (cli, root) = try Self.checkout(studio: ages.studio, cli: ages.cli, source: ages.source)
        let process = try Self.studio(cli, root)
        defer { process.signal(SIGKILL) }
        process.closeStdin()
        let status = try await process.waitForExit(seconds: max(defaultTimeout, 120))
        let stderr = process.stderr.joined(separator: "\n")
        #expect(status == 69, "\(stderr)")
        #expect(
            stderr.contains("the studio is older than this switchyard or its sources: building it again"), "\(stderr)")
        #expect(
            stderr.contains(
                "building the studio failed (swift build --package-path \(root)/Sources/Studio --scratch-path \(root)/.build/studio -c debug --product switchyard-studio"
            ), "\(stderr)")
        #expect(!process.stdout.contains { $0.contains("http://") }, "\(process.stdout)")
    }
}
