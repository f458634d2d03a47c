// The measuring loop of the Swift peer hosts, the same as the Node and Python hosts': COUNT sequential round trips,
// then PIPELINED requests with WINDOW in flight (WINDOW workers, each awaiting its answer before sending the next),
// as switchyard-bench's burst keeps 1,024 in flight. Prints {"samples":[ns,...],"pipelinedNs":N} on stdout.
import Foundation
import Synchronization

/// The command line every peer host takes: `COUNT PIPELINED WINDOW -- CHILD COMMAND...`.
public struct PeerArguments: Sendable {
    public let count: Int
    public let pipelined: Int
    public let window: Int
    public let child: [String]

    public init() {
        let arguments = CommandLine.arguments
        let separator = arguments.firstIndex(of: "--") ?? arguments.count
        let numbers = arguments[1..<min(4, separator)].compactMap { Int($0) }
        guard numbers.count == 3, separator + 1 < arguments.count else {
            FileHandle.standardError.write(
                Data("usage: \(arguments[0]) COUNT PIPELINED WINDOW -- CHILD COMMAND...\n".utf8))
            exit(64)
        }
        (count, pipelined, window) = (numbers[0], numbers[1], numbers[2])
        child = Array(arguments[(separator + 1)...])
    }

    /// The child as a Foundation `Process` with its standard input and output on pipes (stderr inherited).
    public func spawnChild() throws -> (process: Process, toChild: Pipe, fromChild: Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: child[0])
        process.arguments = Array(child.dropFirst())
        let toChild = Pipe(), fromChild = Pipe()
        process.standardInput = toChild
        process.standardOutput = fromChild
        try process.run()
        return (process, toChild, fromChild)
    }
}

/// Runs the two measures with `request` (one round trip) and prints the result line.
public func measure(_ arguments: PeerArguments, request: @escaping @Sendable () async throws -> Void) async throws {
    let clock = ContinuousClock()
    var samples: [Int64] = []
    samples.reserveCapacity(arguments.count)
    for _ in 0..<arguments.count {
        let start = clock.now
        try await request()
        samples.append(nanoseconds(clock.now - start))
    }
    let unsent = Countdown(arguments.pipelined)
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<arguments.window {
            group.addTask {
                while unsent.take() { try await request() }
            }
        }
        try await group.waitForAll()
    }
    let pipelinedNs = nanoseconds(clock.now - start)
    let line = "{\"samples\":[\(samples.map(String.init).joined(separator: ","))],\"pipelinedNs\":\(pipelinedNs)}\n"
    FileHandle.standardOutput.write(Data(line.utf8))
}

/// Requests not yet sent, shared by the workers of the burst.
private final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    init(_ count: Int) { remaining = Atomic(count) }
    /// Whether one more request may go out.
    func take() -> Bool { remaining.subtract(1, ordering: .relaxed).oldValue > 0 }
}

private func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
}
