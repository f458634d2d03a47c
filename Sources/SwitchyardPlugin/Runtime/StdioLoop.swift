import Dispatch
import SwitchyardProtocol
import SwitchyardSystem

extension PluginRuntime {
    /// Takes over stdio and serves the host until stdin closes. Never returns.
    ///
    /// Call it from the executable's top-level code (or a synchronous `main`): it parks the main thread in
    /// `dispatchMain()`, which runs the main actor, and serves stdin from a thread of its own (`StdioLoop`).
    public nonisolated static func run(_ makeRuntime: @escaping @MainActor @Sendable () -> PluginRuntime) -> Never {
        let protocolFD = StdioGuard.protectStdout()
        DispatchQueue.main.async {
            let runtime = makeRuntime()
            runtime.output.descriptor = protocolFD
            StdioLoop.start(runtime)
        }
        dispatchMain()
    }
}

/// The plugin's stdio: one thread reads stdin, then runs the handlers of every line that arrived on the main actor
/// *on that same thread*, and writes every answer of the read in one `write`.
///
/// Why: handing each batch from the reader thread to the main queue (`DispatchQueue.main.async`) cost a futex wake
/// and a second thread's wake-up per round trip, most of a `$/ping` hop's software cost. After `dispatchMain()` the
/// main queue is an ordinary serial queue, and `DispatchQueue.main.sync` from another thread runs the block right
/// there when the queue is idle: the handlers keep the main actor's guarantee (nothing else on the main actor runs
/// meanwhile; async handlers and main-actor tasks run on the main queue between batches), and nothing is woken.
/// No descriptor is added either: a plugin holds exactly 0, 1 and 2.
///
/// One write per read: a lone request is answered as soon as its handler returns, and a pipelined burst (many lines
/// per read) costs one `write` for all its answers, not one each.
///
/// Lines are framed in place in the read buffer and handed to ``PluginRuntime/serve(_:start:end:lineNumber:)`` as
/// ranges: no array or slice per line. Framing is the protocol's ``LineRules``, as ``LineFramer`` applies them
/// (newlines found with `memchr`, ``Bytes/firstIndex(of:in:from:to:)``); the SDK sets no line limit, since the
/// host bounds what it sends and a plugin has no one to report a long line to.
enum StdioLoop {
    /// Bytes asked for per `read`: a pipelined burst of small requests arrives in one or two reads. The buffer
    /// grows (doubling) only for a line longer than it.
    static let readSize = 64 * 1024

    @MainActor
    static func start(_ runtime: PluginRuntime) {
        // The runtime is main-actor isolated (so Sendable): the reader thread only ever uses it inside
        // `DispatchQueue.main.sync`, on the main actor.
        DispatchQueue(label: "switchyard.stdin").async { serve(runtime) }
    }

    private static func serve(_ runtime: PluginRuntime) -> Never {
        var buffer = [UInt8](repeating: 0, count: readSize)
        // `buffer[0..<filled]` holds bytes read; lines before `consumed` are served, `lineCount` numbers them.
        var filled = 0
        var lineCount = 0
        // Taken once: `DispatchQueue.main` makes a new wrapper object on every access.
        let main = DispatchQueue.main
        while true {
            if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            // End of file, or an unreadable stdin (which ends the conversation the same way): the unterminated last
            // line, if any, then the plugin contract: exit.
            guard let count = try? Descriptor.read(0, into: &buffer, at: filled), count > 0 else {
                finish(buffer, filled, lineCount, on: runtime)
            }
            let scanFrom = filled
            filled += count
            let consumed = run(buffer, scanFrom: scanFrom, filled: filled, lineCount: &lineCount, on: runtime, main)
            if consumed > 0 {
                // The partial line (rare: a burst cut by the read size) moves to the front.
                for index in 0..<(filled - consumed) { buffer[index] = buffer[consumed + index] }
                filled -= consumed
            }
        }
    }

    /// Serves every complete line in `buffer[..<filled]` (new bytes from `scanFrom`); returns how many bytes they
    /// took.
    private static func run(
        _ buffer: [UInt8], scanFrom: Int, filled: Int, lineCount: inout Int, on runtime: PluginRuntime,
        _ main: DispatchQueue
    ) -> Int {
        // Only the first newline is searched here: the rest are found on the main actor, line by line.
        guard Bytes.firstIndex(of: LineRules.newline, in: buffer, from: scanFrom, to: filled) != nil else { return 0 }
        var count = lineCount
        var consumed = 0
        // The `Void` overload: the generic one (a result) instantiates `Optional<T>` metadata on every call.
        main.sync {
            MainActor.assumeIsolated { consumed = serveLines(buffer, filled: filled, lineCount: &count, runtime) }
        }
        lineCount = count
        return consumed
    }

    /// The last bytes, then exit.
    private static func finish(_ buffer: [UInt8], _ filled: Int, _ lineCount: Int, on runtime: PluginRuntime) -> Never {
        DispatchQueue.main.sync {
            MainActor.assumeIsolated {
                var count = lineCount
                runtime.inBatch = true
                let consumed = serveLines(buffer, filled: filled, lineCount: &count, runtime)
                if consumed < filled {
                    serveLine(buffer, start: consumed, terminator: filled, lineNumber: count + 1, runtime)
                }
                runtime.inBatch = false
                return runtime.stdinClosed()
            }
        }
    }

    /// Serves the complete lines of `buffer[..<filled]` as one batch (one flush); returns the bytes they took.
    @MainActor
    private static func serveLines(
        _ buffer: [UInt8], filled: Int, lineCount: inout Int, _ runtime: PluginRuntime
    ) -> Int {
        var start = 0
        runtime.inBatch = true
        while let newline = Bytes.firstIndex(of: LineRules.newline, in: buffer, from: start, to: filled) {
            lineCount += 1
            serveLine(buffer, start: start, terminator: newline, lineNumber: lineCount, runtime)
            start = newline + 1
        }
        runtime.inBatch = false
        runtime.flush()
        return start
    }

    @MainActor
    private static func serveLine(
        _ buffer: [UInt8], start: Int, terminator: Int, lineNumber: Int, _ runtime: PluginRuntime
    ) {
        let end = LineRules.contentEnd(buffer, start: start, terminator: terminator)
        // Blank lines (a stray `print()`) are no fault: skipped, as ``MessageReader`` skips them.
        if LineRules.isBlank(buffer, start: start, end: end) { return }
        runtime.serve(buffer, start: start, end: end, lineNumber: lineNumber)
    }
}
