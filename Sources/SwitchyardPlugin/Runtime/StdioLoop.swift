import CSwitchyardStdio
import Dispatch
import SwitchyardProtocol
import SystemPackage

extension PluginRuntime {
    /// Takes over stdio and serves the host until stdin closes. Never returns.
    ///
    /// Call it from the executable's top-level code (or a synchronous `main`): the main thread becomes the plugin's
    /// one I/O and main-actor thread (``StdioLoop``). Called from another thread, it parks the main thread in
    /// `dispatchMain()` instead and reads stdin on a thread of its own.
    public nonisolated static func run(_ makeRuntime: @escaping @MainActor @Sendable () -> PluginRuntime) -> Never {
        let protocolFD = StdioGuard.protectStdout()
        let queue = switchyard_main_queue_handle()
        if switchyard_is_main_thread() != 0 && queue >= 0 {
            MainActor.assumeIsolated {
                let runtime = makeRuntime()
                runtime.output.descriptor = FileDescriptor(rawValue: protocolFD)
                StdioLoop.serve(runtime, mainQueue: queue)
            }
        }
        DispatchQueue.main.async {
            let runtime = makeRuntime()
            runtime.output.descriptor = FileDescriptor(rawValue: protocolFD)
            ThreadedReader.start(runtime)
        }
        dispatchMain()
    }
}

/// The plugin's stdio served on the main thread, which also runs the main actor: one thread reads a batch of lines,
/// runs their handlers and writes every answer of the batch in one `write`, with no hand-off between threads.
///
/// Why not a reader thread: handing each batch from a thread blocked on stdin to the main queue costs a futex wake
/// and a second thread's wake-up per round trip, most of a `$/ping` hop's software cost. Here the thread waits in
/// one `poll` on stdin and on the main queue's wake-up descriptor (the handle CoreFoundation's run loop waits on),
/// and runs whatever the main queue holds (async handlers resuming, `DispatchQueue.main` blocks, main-actor tasks)
/// when it is signalled, so the main actor keeps its meaning: handlers never run concurrently, and only here.
@MainActor
enum StdioLoop {
    /// Bytes asked for per `read`: a pipelined burst of small requests arrives in one or two reads.
    static let readSize = 64 * 1024

    static func serve(_ runtime: PluginRuntime, mainQueue: Int32) -> Never {
        runtime.servedByLoop = true
        // Output waits for the end of the batch: no block is queued per answer (see `PluginRuntime.flush()`).
        runtime.flushScheduled = true
        // No line limit of its own: the host bounds what it sends, and a plugin has no one to report a long line to.
        var reader = MessageReader(maxLineLength: Int(Int32.max))
        var buffer = [UInt8](repeating: 0, count: readSize)
        // Whatever the main queue got before the loop (from top-level code, or `makeRuntime`), run first.
        switchyard_main_queue_drain(mainQueue)
        while true {
            let ready = switchyard_stdio_wait(0, mainQueue)
            if ready < 0 {
                StdioGuard.writeError("switchyard: cannot wait for stdin (errno \(-ready))\n")
                runtime.stdinClosed()
            }
            if ready & 1 != 0 {
                let count = unsafe switchyard_stdio_read(0, &buffer, buffer.count)
                guard count > 0 else {
                    // End of file (or an unreadable stdin, which ends the conversation the same way).
                    if let last = reader.finish() { runtime.handle(last) }
                    runtime.stdinClosed()
                }
                reader.append(Array(buffer[0..<Int(count)]))
                while let event = reader.next() { runtime.handle(event) }
            }
            if ready & 2 != 0 { switchyard_main_queue_drain(mainQueue) }
            runtime.flush()
        }
    }
}

/// The fallback when ``PluginRuntime/run(_:)`` is not called on the main thread (or libdispatch offers no handle):
/// a thread blocks on stdin and hands complete lines to the main actor in batches.
enum ThreadedReader {
    @MainActor
    static func start(_ runtime: PluginRuntime) {
        let inbox = Inbox()
        let target = UnsafeSendable(runtime)
        DispatchQueue(label: "switchyard.stdin").async {
            while let line = readLine(strippingNewline: true) {
                if inbox.push(line) {
                    DispatchQueue.main.async { drain(target.value, inbox) }
                }
            }
            inbox.close()
            DispatchQueue.main.async { drain(target.value, inbox) }
        }
    }

    /// Processes every line that arrived, then writes all answers at once.
    @MainActor
    private static func drain(_ runtime: PluginRuntime, _ inbox: Inbox) {
        while true {
            let (lines, closed) = inbox.take()
            if lines.isEmpty {
                runtime.flush()
                if closed { runtime.stdinClosed() }
                return
            }
            for line in lines { runtime.handleLine(line) }
        }
    }
}
