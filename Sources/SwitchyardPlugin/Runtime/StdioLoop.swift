import CSwitchyardStdio
import Dispatch
import SwitchyardProtocol
import SystemPackage

extension PluginRuntime {
    /// Takes over stdio and serves the host until stdin closes. Never returns.
    ///
    /// Call it from the executable's top-level code (or a synchronous `main`): it parks the main thread in
    /// `dispatchMain()`, which runs the main actor, and serves stdin from a thread of its own (``StdioLoop``).
    public nonisolated static func run(_ makeRuntime: @escaping @MainActor @Sendable () -> PluginRuntime) -> Never {
        let protocolFD = StdioGuard.protectStdout()
        DispatchQueue.main.async {
            let runtime = makeRuntime()
            runtime.output.descriptor = FileDescriptor(rawValue: protocolFD)
            StdioLoop.start(runtime)
        }
        dispatchMain()
    }
}

/// The plugin's stdio: one thread reads stdin, frames and parses what arrived, then runs the batch's handlers on
/// the main actor *on that same thread* and writes every answer of the batch in one `write`.
///
/// Why: handing each batch from the reader thread to the main queue (`DispatchQueue.main.async`) cost a futex wake
/// and a second thread's wake-up per round trip, most of a `$/ping` hop's software cost. After `dispatchMain()` the
/// main queue is an ordinary serial queue, and `DispatchQueue.main.sync` from another thread runs the block right
/// there when the queue is idle: the handlers keep the main actor's guarantee (nothing else on the main actor runs
/// meanwhile; async handlers and main-actor tasks run on the main queue between batches), and nothing is woken.
/// No descriptor is added either: a plugin holds exactly 0, 1 and 2.
enum StdioLoop {
    /// Bytes asked for per `read`: a pipelined burst of small requests arrives in one or two reads.
    static let readSize = 64 * 1024

    @MainActor
    static func start(_ runtime: PluginRuntime) {
        let target = UnsafeSendable(runtime)
        DispatchQueue(label: "switchyard.stdin").async { serve(target) }
    }

    private static func serve(_ target: UnsafeSendable<PluginRuntime>) -> Never {
        // No line limit of its own: the host bounds what it sends, and a plugin has no one to report a long line to.
        var reader = MessageReader(maxLineLength: Int(Int32.max))
        var buffer = [UInt8](repeating: 0, count: readSize)
        var batch: [MessageReader.Event] = []
        while true {
            let count = unsafe switchyard_stdio_read(0, &buffer, buffer.count)
            guard count > 0 else {
                // End of file (or an unreadable stdin, which ends the conversation the same way).
                if let last = reader.finish() { batch.append(last) }
                finish(batch, on: target)
            }
            reader.append(Array(buffer[0..<count]))
            while let event = reader.next() { batch.append(event) }
            run(batch, on: target)
            batch.removeAll(keepingCapacity: true)
        }
    }

    private static func run(_ batch: [MessageReader.Event], on target: UnsafeSendable<PluginRuntime>) {
        DispatchQueue.main.sync {
            MainActor.assumeIsolated { handle(batch, target.value) }
        }
    }

    /// The last batch, then the plugin contract at end of file: exit.
    private static func finish(_ batch: [MessageReader.Event], on target: UnsafeSendable<PluginRuntime>) -> Never {
        DispatchQueue.main.sync {
            MainActor.assumeIsolated {
                handle(batch, target.value)
                return target.value.stdinClosed()
            }
        }
    }

    @MainActor
    private static func handle(_ batch: [MessageReader.Event], _ runtime: PluginRuntime) {
        runtime.inBatch = true
        for event in batch { runtime.handle(event) }
        runtime.inBatch = false
        runtime.flush()
    }
}
