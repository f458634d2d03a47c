import Foundation
import Testing

/// The point of the SwitchyardClient module: talking to a host must not need libuv. Read from the manifest itself
/// (`swift package dump-package` loads only this package's manifest, resolves nothing and takes ~0.3 s), so the
/// check fails the moment someone adds a libuv-linked dependency, directly or through another target.
@Suite("SwitchyardClient needs no libuv", .timeLimit(.minutes(1)))
struct DependencyTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Each target's direct dependencies by name (targets of this package and products of others alike).
    static func targetDependencies() throws -> [String: [String]] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-dump-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A scratch path of its own: the package's .build is locked by the `swift test` running this.
        process.arguments = ["swift", "package", "--package-path", packageRoot.path, "--scratch-path", scratch.path, "dump-package"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var dependencies: [String: [String]] = [:]
        for target in manifest["targets"] as? [[String: Any]] ?? [] {
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

    @Test("the transitive target dependencies of SwitchyardClient include neither CLibUV nor SwitchyardUV")
    func noLibUV() throws {
        let graph = try Self.targetDependencies()
        try #require(graph["SwitchyardClient"] != nil, "the manifest has no SwitchyardClient target")
        var seen: Set<String> = []
        var queue = ["SwitchyardClient"]
        while let next = queue.popLast() {
            guard seen.insert(next).inserted else { continue }
            queue += graph[next] ?? []
        }
        #expect(!seen.contains("CLibUV") && !seen.contains("SwitchyardUV") && !seen.contains("SwitchyardHost"), "\(seen.sorted())")
        // The check itself is alive: the host does reach libuv through the same walk.
        #expect(graph["SwitchyardUV"]?.contains("CLibUV") == true)
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

    @Test("the host, the CLI and the plugin SDK reach no SwiftNIO or Hummingbird: only switchyard-studio does (SwiftPM links an executable's dependencies into its dependents, so the CLI must not depend on it)")
    func noNIOInTheHost() throws {
        let graph = try Self.targetDependencies()
        for target in ["switchyard", "SwitchyardHost", "SwitchyardPlugin", "SwitchyardClient"] {
            let reached = Self.reach(target, in: graph)
            #expect(!reached.contains { $0.hasPrefix("Hummingbird") || $0.hasPrefix("NIO") || $0 == "SwitchyardStudio" || $0 == "switchyard-studio" },
                "\(target) reaches \(reached.sorted())")
        }
        // The check itself is alive: the studio does reach Hummingbird through the same walk.
        #expect(Self.reach("switchyard-studio", in: graph).contains("Hummingbird"))
    }
}
