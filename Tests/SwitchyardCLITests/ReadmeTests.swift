import Foundation
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The fenced blocks of a document (`file`, from the package's root) that follow a `<!-- MARKER: LABEL -->` line, in
/// order: the label and the block's text.
func readmeBlocks(marker: String, in file: String = "README.md") throws -> [(label: String, content: String)] {
    let readme = String(decoding: try FileSystem.readFile(packageRoot + "/" + file), as: UTF8.self)
    let prefix = "<!-- \(marker): "
    var blocks: [(String, String)] = []
    var pendingLabel: String?
    var block: [Substring]?
    for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
        if var lines = block {
            if line.hasPrefix("```") {
                if let label = pendingLabel { blocks.append((label, lines.joined(separator: "\n"))) }
                pendingLabel = nil
                block = nil
            } else {
                lines.append(line)
                block = lines
            }
        } else if line.hasPrefix(prefix), line.hasSuffix(" -->") {
            pendingLabel = String(line.dropFirst(prefix.count).dropLast(" -->".count))
        } else if line.hasPrefix("```") {
            block = []
        }
    }
    return blocks
}

/// The README's "write your first plugin" is code a newcomer copies: the test copies it out of the README the same
/// way (every fenced block after a `<!-- readme-test: PATH -->` marker) and runs it.
@Suite("README", .heavy, .timeLimit(.minutes(2)))
struct ReadmeTests {
    /// The marked blocks: path → content.
    static func markedFiles() throws -> [(path: String, content: String)] {
        try readmeBlocks(marker: "readme-test").map { ($0.label, $0.content + "\n") }
    }

    @Test(
        "the first-plugin tutorial (SDK installed with pip, Python plugin, manifest extending the demo, try script) runs as written"
    )
    func firstPlugin() async throws {
        // As the README says: the SDK installed into a virtual environment whose python3 is first on the PATH.
        let environment = try await SDKInstall.pythonEnvironment()
        let files = try Self.markedFiles()
        #expect(files.map(\.path) == ["myapp/profile.py", "myapp/switchyard.json", "myapp/try.txt"])
        // Same depth as the README's myapp/, so its relative paths (../Plugins, ../Protocol) hold.
        let directory = ".build-readme-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let absolute = packageRoot + "/" + directory
        try FileManager.default.createDirectory(atPath: absolute, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: absolute) }
        for file in files {
            let target = absolute + "/" + file.path.dropFirst("myapp/".count)
            try SpawnLock.withLock { try file.content.write(toFile: target, atomically: true, encoding: .utf8) }
        }
        // Under 20 lines of plugin code, as promised (imports and blank lines aside).
        let code = try #require(files.first?.content).split(separator: "\n").filter { line in
            !line.trimmingCharacters(in: .whitespaces).isEmpty && !line.hasPrefix("import") && !line.hasPrefix("#")
                && !line.hasPrefix("from")
        }
        #expect(code.count <= 20, "\(code.count) lines")

        let path = environment + ":" + (SystemProcess.environmentValue("PATH") ?? "/usr/bin:/bin")
        let process = try CLIProcess(
            [
                "run", "--manifest", "\(directory)/switchyard.json", "--script", "\(directory)/try.txt", "--json",
                "--no-socket",
            ],
            environment: ["PATH": path])
        process.closeStdin()
        #expect(try await process.waitForExit() == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        guard let line = process.stdout.last(where: { $0.hasPrefix("{") }) else {
            Issue.record("no snapshot:\n\(process.stdout.joined(separator: "\n"))")
            return
        }
        let tree = try JSONValueDecoder().decode(TreeSnapshot.self, from: JSONParser.parse(line))
        let profile = try #require(tree.instances.first { $0.plugin == "profile" })
        #expect(
            profile.root?.content
                == .screen(ScreenDescriptor(name: "MyProfile", props: ["greeting": "Hello from Python"])))
        // Through the tutorial's async route method.
        #expect(
            profile.entries?.last?.content
                == .screen(ScreenDescriptor(name: "Badge", props: ["id": "gold", "title": "Gold member"])))
        // The rest of the demo app came through `extends`.
        #expect(Set(tree.instances.map(\.plugin)) == ["main", "authenticated", "todos", "projects", "profile"])

        // The README then checks the plugin on its own: it passes.
        let check = try CLIProcess(
            ["check-plugin", "--", "python3", "\(directory)/profile.py"], environment: ["PATH": path])
        check.closeStdin()
        #expect(try await check.waitForExit() == 0, "\(check.stdout.joined(separator: "\n"))")
    }

    @Test("the README names the two quick-start commands, the scenario command, and links the protocol spec")
    func quickStart() throws {
        let readme = String(decoding: try FileSystem.readFile(packageRoot + "/README.md"), as: UTF8.self)
        #expect(readme.contains("swift run switchyard run "))
        #expect(readme.contains("swift test "))
        #expect(readme.contains("swift run switchyard run --script Plugins/demo/scenarios/stinsen-readme.txt --json"))
        #expect(readme.contains("(Protocol/README.md)"))
        #expect(FileSystem.exists(packageRoot + "/Plugins/demo/scenarios/stinsen-readme.txt"))
    }
}
