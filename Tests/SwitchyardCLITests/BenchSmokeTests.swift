import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The benchmark is not part of CI's pass/fail on figures (no timing assertions anywhere in `swift test`), but it
/// is built and run once, small, so a change that breaks a measure breaks here rather than on the next release run.
@Suite("Benchmark smoke run", .heavy, .timeLimit(.minutes(3)))
struct BenchSmokeTests {
    @Test("switchyard-bench --quick measures every section and writes its table, JSON and picture")
    func quickRun() async throws {
        let output = "/tmp/switchyard-bench-smoke-\(SystemProcess.currentPID)"
        _ = try? SystemProcess.run(["rm", "-rf", output])
        defer { _ = try? SystemProcess.run(["rm", "-rf", output]) }
        // --no-pin: pinning the test's helper to one CPU would slow everything else CI runs beside it.
        let result = try await onThreadOfItsOwn {
            try SystemProcess.run(
                [product("switchyard-bench"), "--quick", "--no-pin", "--output", output], timeoutMilliseconds: 150_000)
        }
        #expect(result.status == 0, "\(result.text.suffix(2_000))")
        let document = try JSONParser.parse(FileSystem.readFile("\(output)/latest.json"))
        let rows = document["results"]?.arrayValue ?? []
        let sections = Set(rows.compactMap { $0["section"]?.stringValue })
        for expected in [
            "Hop host ↔ plugin", "Pipelined", "Spawn to ready", "Crash to restored tree", "A deep link", "Scale",
            "Lazy start and hibernation",
        ] {
            #expect(sections.contains { $0.hasPrefix(expected) }, "no \(expected) section in \(sections)")
        }
        for row in rows {
            #expect((row["switchyard"]?.doubleValue ?? 0) > 0, "\(row)")
            #expect((row["floor"]?.doubleValue ?? 0) > 0, "\(row)")
        }
        let svg = try FileSystem.readFile("\(output)/latency-cdf.svg")
        #expect(String(decoding: svg, as: UTF8.self).contains("<svg"))
        #expect(try FileSystem.readFile("\(output)/latest.md").count > 100)
    }
}
