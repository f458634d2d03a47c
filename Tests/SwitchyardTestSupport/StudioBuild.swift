import SwitchyardSystem
package import Testing

/// The Studio is a package of its own (`Sources/Studio`), so `swift test` does not build it: the suites that start
/// it build it first, once per test run, through this trait. The build happens at the suite's scope, outside every
/// test's time limit (as ``HeavySuite``'s permit is taken); put `.heavy` before it, so the compiler never runs beside
/// a suite that judges timing (those run alone).
package struct StudioBuilt: SuiteTrait, TestScoping {
    /// The executable the build makes; `switchyard studio` finds it there too (its source checkout's Studio build).
    package static let executable = packageRoot + "/.build/studio/debug/switchyard-studio"

    /// One build per test process, whichever suite asks first; the others await the same one. The build runs on a
    /// thread of its own (see ``onThreadOfItsOwn(_:)``): minutes of `swift build` on a thread of the cooperative pool
    /// starved an in-process suite into its time limit on a cold run.
    private static let build = Task { try await onThreadOfItsOwn { try buildNow().get() } }

    private static func buildNow() -> Result<Void, TestFailure> {
        // Where `switchyard studio` builds it in a checkout (``executable``): the root's `.build/studio`.
        let scratch = packageRoot + "/.build/studio"
        let command = [
            "swift", "build", "--package-path", packageRoot + "/Sources/Studio", "--scratch-path", scratch, "--product",
            "switchyard-studio",
        ]
        do {
            var result = try SystemProcess.run(command, timeoutMilliseconds: 900_000)
            var earlier = ""
            if result.status != 0, result.text.contains("missing") {
                // SwiftPM keeps a path dependency's old file list: after files of the root package were added or
                // moved, an incremental build can fail with "missing inputs" (ExternalPluginTests met it). A clean one
                // cannot. Any other failure is the code's, reported as it is.
                earlier = "the first attempt, before its build folder was removed:\n\(result.text.suffix(2_000))\n"
                _ = try SystemProcess.run(["rm", "-rf", scratch], timeoutMilliseconds: 60_000)
                result = try SystemProcess.run(command, timeoutMilliseconds: 900_000)
            }
            guard result.status == 0, FileSystem.exists(executable) else {
                return .failure(
                    TestFailure(
                        "building the studio failed (\(command.joined(separator: " "))):\n\(earlier)\(result.text)"))
            }
            return .success(())
        } catch {
            return .failure(TestFailure("building the studio failed (\(command.joined(separator: " "))): \(error)"))
        }
    }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await Self.build.value
        try await function()
    }
}

extension Trait where Self == StudioBuilt {
    /// Builds the Studio's package before the suite runs: see ``StudioBuilt``.
    package static var studioBuilt: Self { StudioBuilt() }
}
