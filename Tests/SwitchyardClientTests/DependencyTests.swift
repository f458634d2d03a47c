import Foundation
import Testing

/// The package's layering, read from the manifest itself (`swift package dump-package` loads only this package's
/// manifest, resolves nothing and takes ~0.3 s), so a check fails the moment someone adds a dependency that breaks
/// it, directly or through another target: talking to a host (SwitchyardClient) and writing a plugin (the SDK) must
/// not need libuv, and only the libuv wrapper and the syscall layer may use pointers.
@Suite("Package layering: no libuv in the client or the SDK, strict memory safety elsewhere", .timeLimit(.minutes(1)))
struct DependencyTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The manifest's targets, as `dump-package` writes them.
    static func targets() throws -> [[String: Any]] {
        try manifest()["targets"] as? [[String: Any]] ?? []
    }

    /// The manifest of the package at `path` (default: this one), as `dump-package` writes it.
    static func manifest(at path: String? = nil) throws -> [String: Any] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "switchyard-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A scratch path of its own: the package's .build is locked by the `swift test` running this.
        process.arguments = [
            "swift", "package", "--package-path", path ?? packageRoot.path, "--scratch-path", scratch.path,
            "dump-package",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Each of a manifest's package dependencies as text: its whole entry, which holds its location (a URL, or a
    /// path for a local one) somewhere inside, to search for a name.
    static func dependencyDescriptions(_ manifest: [String: Any]) -> [String] {
        (manifest["dependencies"] as? [[String: Any]] ?? []).map { dependency in
            // {"sourceControl": [{"location": {"remote": [{"urlString": …}]}}]} or {"fileSystem": [{"path": …}]}
            String(describing: dependency)
        }
    }

    /// Each target's direct dependencies by name (targets of this package and products of others alike).
    static func targetDependencies() throws -> [String: [String]] {
        var dependencies: [String: [String]] = [:]
        for target in try targets() {
            guard let name = target["name"] as? String else { continue }
            dependencies[name] = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                // {"byName": [name, condition]}, {"target": [name, condition]}, {"product": [name, package, ...]}
                for key in ["byName", "target", "product"] {
                    if let value = dependency[key] as? [Any], let name = value.first as? String { return name }
                }
                return nil
            }
        }
        return dependencies
    }

    // SwitchyardPluginTesting is not among them: its test store runs the real host (and so libuv) inside a plugin's
    // tests; the plugin itself, built from the SDK alone, never links it.
    @Test(
        "the transitive target dependencies of the client and of the plugin SDK include neither CLibUV nor SwitchyardUV",
        arguments: ["SwitchyardClient", "SwitchyardPlugin"])
    func noLibUV(_ target: String) throws {
        let graph = try Self.targetDependencies()
        try #require(graph[target] != nil, "the manifest has no \(target) target")
        let seen = Self.reach(target, in: graph)
        #expect(
            !seen.contains("CLibUV") && !seen.contains("SwitchyardUV") && !seen.contains("SwitchyardHost"),
            "\(seen.sorted())")
        // The check itself is alive: the host does reach libuv through the same walk.
        #expect(Self.reach("SwitchyardHost", in: graph).contains("CLibUV"))
    }

    @Test("the shipped CLI links no test module: the schema validator and transcripts it needs are SwitchyardSpec")
    func noTestModuleInTheCLI() throws {
        let graph = try Self.targetDependencies()
        let tests = [
            "SwitchyardTestSupport", "SwitchyardHostTestSupport", "SwitchyardPluginTesting", "Testing", "XCTest",
        ]
        let reached = Self.reach("switchyard", in: graph)
        #expect(reached.isDisjoint(with: tests), "switchyard reaches \(reached.intersection(tests).sorted())")
        // The check itself is alive: the CLI does reach the spec's module through the same walk.
        #expect(reached.contains("SwitchyardSpec"))
    }

    @Test(
        "every Swift module but the libuv wrapper and the syscall layer is built with strict memory safety, test targets included"
    )
    func strictMemorySafety() throws {
        var exempt: [String] = []
        for target in try Self.targets() {
            guard let name = target["name"] as? String, let type = target["type"] as? String,
                type != "system"
            else { continue }
            let settings = target["settings"] as? [[String: Any]] ?? []
            let strict = settings.contains { ($0["kind"] as? [String: Any])?["strictMemorySafety"] != nil }
            if !strict { exempt.append(name) }
        }
        #expect(exempt.sorted() == ["SwitchyardSystem", "SwitchyardUV"])
    }

    /// Every target `start` reaches through the graph (itself included).
    static func reach(_ start: String, in graph: [String: [String]]) -> Set<String> {
        var seen: Set<String> = []
        var queue = [start]
        while let next = queue.popLast() {
            guard seen.insert(next).inserted else { continue }
            queue += graph[next] ?? []
        }
        return seen
    }

    @Test(
        "this package depends on no SwiftNIO or Hummingbird at all: the Studio, their one user, is a package of its own (Sources/Studio), so no other build resolves or compiles them"
    )
    func noNIOInThePackage() throws {
        let root = Self.dependencyDescriptions(try Self.manifest())
        #expect(root.count >= 3, "the walk sees the package's dependencies: \(root)")
        #expect(!root.contains { $0.contains("hummingbird") || $0.contains("swift-nio") }, "\(root)")
        for (name, dependencies) in try Self.targetDependencies() {
            #expect(
                !dependencies.contains { $0.hasPrefix("Hummingbird") || $0.hasPrefix("NIO") },
                "\(name): \(dependencies)")
        }
        // The check itself is alive: the Studio's manifest does name Hummingbird, through the same reading.
        let studio = Self.dependencyDescriptions(try Self.manifest(at: Self.packageRoot.path + "/Sources/Studio"))
        #expect(studio.contains { $0.contains("hummingbird") }, "\(studio)")
    }
}
