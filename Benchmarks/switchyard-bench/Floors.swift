import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

// The floors: what the pipes, the scheduler and a minimal C program cost, measured over the same kind of libuv
// pipes in the same run as Switchyard's figures.

/// Sequential round trips of `line` through `switchyard-echo` (no parsing on either side), in nanoseconds.
func echoRoundTrips(_ line: [UInt8], count: Int, echo: String) async throws -> [UInt64] {
    try await echoRoundTrips(line, count: count, echo: [echo])
}

/// The same with the echo started by `echo` (its path, after a placing command such as `taskset -c 1`).
func echoRoundTrips(_ line: [UInt8], count: Int, echo: [String]) async throws -> [UInt64] {
    try await runOnLoopThread([UInt64].self, timeoutMs: 120_000) { loop, finish in
        let options = UVSpawnOptions(executable: echo[0], arguments: Array(echo.dropFirst()), stderr: .ignore)
        let process = try UVProcess.spawn(loop: loop, options: options) { _ in }
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        var pending = 0
        var start: UInt64 = 0
        func send() {
            start = UVLoop.hrtime
            try? process.stdin?.write(line)
        }
        try process.stdout?.startReading { event in
            guard case .data(let bytes) = event else { return }
            pending += bytes.count
            guard pending >= line.count else { return }
            pending -= line.count
            samples.append(UVLoop.hrtime - start)
            if samples.count == count {
                process.stdin?.close()
                process.stdout?.close()
                finish(.success(samples))
            } else {
                send()
            }
        }
        send()
    }.value
}

/// `count` copies of `line` written back to back through the echo child; nanoseconds until every one came back.
func echoPipelined(_ line: [UInt8], count: Int, echo: String) async throws -> UInt64 {
    try await runOnLoopThread(UInt64.self, timeoutMs: 120_000) { loop, finish in
        let process = try UVProcess.spawn(loop: loop, options: UVSpawnOptions(executable: echo, stderr: .ignore)) { _ in
        }
        let start = UVLoop.hrtime
        var newlines = 0
        try process.stdout?.startReading { event in
            guard case .data(let bytes) = event else { return }
            for byte in bytes where byte == 0x0A { newlines += 1 }
            if newlines >= count {
                process.stdin?.close()
                process.stdout?.close()
                finish(.success(UVLoop.hrtime - start))
            }
        }
        // In chunks, as the host writes a burst: one buffer per 256 lines.
        var chunk: [UInt8] = []
        for _ in 0..<256 { chunk += line }
        var sent = 0
        while sent < count {
            let lines = min(256, count - sent)
            try process.stdin?.write(lines == 256 ? chunk : Array(chunk.prefix(lines * line.count)))
            sent += lines
        }
    }.value
}

/// Round trips measured by the C libuv host against a plugin (nanoseconds), for the pinned host-cost comparison.
func cHostRoundTrips(host: String, plugin: String, count: Int) throws -> [UInt64] {
    let result = try SystemProcess.run([host, plugin, String(count)], timeoutMilliseconds: 120_000)
    guard result.status == 0, let value = try? JSONParser.parse(result.output), let array = value.arrayValue else {
        throw BenchFailure("switchyard-c-host failed (\(result.status)): \(result.text.prefix(200))")
    }
    return array.compactMap { $0.intValue.map { UInt64($0) } }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Nanoseconds the C libuv host takes for `count` requests to the C plugin, at most `window` in flight: the floor for
/// pipelined messages (the same window as the Switchyard host's burst; the C echo child has none).
func cHostPipelined(host: String, plugin: String, count: Int, window: Int, route: Bool) throws -> UInt64 {
    let result = try SystemProcess.run(
        [host, plugin, String(count), String(window), route ? "route" : "ping"], timeoutMilliseconds: 120_000)
    guard result.status == 0, let value = try? JSONParser.parse(result.output),
        let elapsed = value["elapsedNs"]?.intValue, elapsed > 0
    else {
        throw BenchFailure("switchyard-c-host (pipelined) failed (\(result.status)): \(result.text.prefix(200))")
    }
    return UInt64(elapsed)
}

/// Read and write calls (`/proc/PID/io` syscr, syscw) of a process so far; nil if they cannot be read.
func processIO(_ pid: Int32?) -> (reads: Int, writes: Int)? {
    let path = pid.map { "/proc/\($0)/io" } ?? "/proc/self/io"
    guard let bytes = try? FileSystem.readFile(path) else { return nil }
    var reads: Int?
    var writes: Int?
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: " ")
        guard parts.count == 2, let value = Int(parts[1]) else { continue }
        if parts[0] == "syscr:" { reads = value }
        if parts[0] == "syscw:" { writes = value }
    }
    guard let reads, let writes else { return nil }
    return (reads, writes)
}

/// The C pair's read and write calls per `$/ping`: the C libuv host's and the C plugin's, over a series of `count`.
func cHostSyscalls(host: String, plugin: String, count: Int) throws -> (host: Double, plugin: Double) {
    let result = try SystemProcess.run([host, plugin, String(count), "0", "syscalls"], timeoutMilliseconds: 120_000)
    guard result.status == 0, let value = try? JSONParser.parse(result.output),
        let messages = value["messages"]?.intValue, messages > 0,
        let hostCalls = value["host"]?.arrayValue?.compactMap(\.intValue), hostCalls.count == 2,
        let pluginCalls = value["plugin"]?.arrayValue?.compactMap(\.intValue), pluginCalls.count == 2
    else {
        throw BenchFailure("switchyard-c-host (syscalls) failed (\(result.status)): \(result.text.prefix(200))")
    }
    return (
        Double(hostCalls.reduce(0, +)) / Double(messages), Double(pluginCalls.reduce(0, +)) / Double(messages)
    )
}
