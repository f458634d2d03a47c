import Dispatch
import Glibc
@_spi(Testing) package import SwitchyardPlugin
import SwitchyardProtocol
package import SwitchyardHost
package import SwitchyardUV
import Synchronization

/// A Swift plugin run inside this process instead of a child: its SDK runtime serves the lines the host writes, on
/// the main actor (as a plugin process's main queue does), and what it writes comes back to the loop through a
/// mailbox. The host's side — the session, its policies, the supervisor — is the same as with a process.
///
/// Process events are played too, so supervision behaves as it does with processes: SIGKILL (or any signal that ends
/// a process) drops the plugin at once and reports it `signaled`; SIGSTOP holds its input and output until SIGCONT;
/// closing its input, or the `exit` notification, ends it cleanly (`exited(0)`, the SDK's own behaviour) — the
/// runtime itself would end the whole process. Each start builds the plugin anew, as a new process would.
///
/// - Important: Loop thread only, like every transport; the plugin side lives on the main actor.
package final class InProcessTransport: PluginTransport {
    private let loop: UVLoop
    private let plugin: Plugin
    private let arguments: [String]
    private weak var sink: (any PluginTransportSink)?
    private var mailbox: UVMailbox<PluginSide.Event>?
    private let side: PluginSide
    private var inputOpen = true
    private var ended = false
    private let recorder: ReceivedNotifications?

    /// A transport that runs `plugin` with `arguments` (what `PluginArguments` reads, as from a command line);
    /// `recorder` keeps every notification the host sends it.
    package init(loop: UVLoop, plugin: Plugin, arguments: [String], recorder: ReceivedNotifications? = nil) {
        self.loop = loop
        self.plugin = plugin
        self.arguments = [plugin.name] + arguments
        self.side = PluginSide()
        self.recorder = recorder
    }

    package func start(_ sink: any PluginTransportSink) throws(UVError) {
        self.sink = sink
        let mailbox = try UVMailbox<PluginSide.Event>(loop: loop) { [weak self] events in self?.received(events) }
        self.mailbox = mailbox
        side.start(plugin, arguments: arguments, poster: mailbox.poster)
    }

    private func received(_ events: [PluginSide.Event]) {
        for event in events {
            guard !ended else { return }
            switch event {
            case .output(let line): sink?.outputReceived(line)
            case .exited(let status):
                ended = true
                inputOpen = false
                sink?.outputEnded()
                sink?.errorsEnded()
                sink?.exited(status)
            }
        }
    }

    /// No process of its own.
    package var pid: Int32 { 0 }

    package var canWrite: Bool { inputOpen && !ended }

    package var queuedBytes: Int { side.unread }

    package func write(_ bytes: [UInt8]) throws(UVError) {
        guard canWrite else { throw UVError.closed("write") }
        if let recorder { recorder.record(bytes, to: plugin.name) }
        side.send(bytes)
    }

    package func cork() {}
    package func uncork() {}

    package func closeInput() {
        guard inputOpen else { return }
        inputOpen = false
        side.endOfInput()
    }

    package func signal(_ number: Int32) {
        guard !ended else { return }
        side.signal(number)
    }

    package func killStragglers() {}
    package func pauseErrors() {}
    package func resumeErrors() {}
    package func readPendingErrors() {}

    package func close() {
        mailbox?.close()
        mailbox = nil
        side.discard()
    }
}

/// The plugin's half: its runtime on the main actor, fed in order through the main queue.
private final class PluginSide: Sendable {
    enum Event: Sendable {
        case output([UInt8])
        case exited(TerminationStatus)
    }

    @MainActor private final class State {
        var runtime: PluginRuntime?
        var core: PluginCore?
        var arguments: [String] = []
        var poster: UVMailbox<Event>.Poster?
        /// SIGSTOP: what it would read and write waits for SIGCONT.
        var stopped = false
        var heldInput: [[UInt8]] = []
        var heldOutput: [[UInt8]] = []
        var dead = false

        nonisolated init() {}
    }

    private let state = State()
    /// Bytes written to the plugin that it has not handled yet (its input pipe's content, as a process would have).
    private let pending = Mutex(0)

    nonisolated init() {}

    var unread: Int { pending.withLock { $0 } }

    func start(_ plugin: Plugin, arguments: [String], poster: UVMailbox<Event>.Poster) {
        onMain { state in
            let server = plugin.makeServer()
            state.runtime = server.runtime
            state.core = server.core
            state.arguments = arguments
            state.poster = poster
            server.runtime.connectInProcess { [weak state] line in
                guard let state, !state.dead else { return }
                let terminated = line.last == 0x0A ? line : line + [0x0A]
                if state.stopped { state.heldOutput.append(terminated) } else { poster.post(.output(terminated)) }
            }
        }
    }

    func send(_ bytes: [UInt8]) {
        pending.withLock { $0 += bytes.count }
        onMain { state in
            if state.stopped {
                state.heldInput.append(bytes)
                return
            }
            self.handle(bytes, state)
        }
    }

    @MainActor private func handle(_ bytes: [UInt8], _ state: State) {
        defer { pending.withLock { $0 -= bytes.count } }
        guard !state.dead, let runtime = state.runtime else { return }
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            let line = bytes[start..<index]
            start = index + 1
            // The SDK ends its process on `exit`: here that is this plugin's end, not the test runner's.
            if Self.isExit(line) {
                end(.exited(0), state)
                return
            }
            PluginArguments.$inProcess.withValue(state.arguments) {
                runtime.handleLine(String(decoding: line, as: UTF8.self))
            }
        }
    }

    private static func isExit(_ line: ArraySlice<UInt8>) -> Bool {
        guard case .message(.notification(let method, _), _) = MessageReader.decodeLine(line, lineNumber: 1) else {
            return false
        }
        return method == ExitNotification.method
    }

    /// Its input closed: a plugin reading end of file exits (the SDK's rule), after what it had read.
    func endOfInput() {
        onMain { state in self.end(.exited(0), state) }
    }

    func signal(_ number: Int32) {
        onMain { state in
            guard !state.dead else { return }
            switch number {
            case SIGSTOP, SIGTSTP:
                state.stopped = true
            case SIGCONT:
                state.stopped = false
                let input = state.heldInput
                let output = state.heldOutput
                state.heldInput.removeAll()
                state.heldOutput.removeAll()
                for line in output { state.poster?.post(.output(line)) }
                for bytes in input { self.handle(bytes, state) }
            case 0:
                break
            default:
                self.end(.signaled(number), state)
            }
        }
    }

    @MainActor private func end(_ status: TerminationStatus, _ state: State) {
        guard !state.dead else { return }
        state.dead = true
        state.runtime = nil
        state.core = nil
        state.poster?.post(.exited(status))
    }

    /// The host let go of the plugin: drop it, whatever it was doing.
    func discard() {
        onMain { state in
            state.dead = true
            state.runtime = nil
            state.core = nil
            state.poster = nil
        }
    }

    /// Runs `body` on the main actor after everything sent before it: the main queue keeps the order of lines.
    private func onMain(_ body: @escaping @MainActor @Sendable (State) -> Void) {
        DispatchQueue.main.async {
            MainActor.assumeIsolated { body(self.state) }
        }
    }
}

extension HostOptions {
    /// Runs every plugin of `plugins` (by manifest name) inside this process; the others as child processes.
    package mutating func runInProcess(_ plugins: [String: Plugin], recorder: ReceivedNotifications? = nil) {
        let previous = transports
        transports = { manifest, loop in
            guard let plugin = plugins[manifest.name] else { return previous?(manifest, loop) }
            return InProcessTransport(loop: loop, plugin: plugin, arguments: manifest.args ?? [], recorder: recorder)
        }
    }

    /// Never starts the plugins `names`: their start fails at once, without a process, as a plugin the manifest names
    /// but the machine cannot run.
    package mutating func leaveOut(_ names: [String]) {
        guard !names.isEmpty else { return }
        let previous = transports
        let absent = Set(names)
        transports = { manifest, loop in absent.contains(manifest.name) ? AbsentTransport() : previous?(manifest, loop)
        }
    }
}

/// A plugin left out of a test: it cannot start (`ENOENT`), as one whose executable is missing.
private final class AbsentTransport: PluginTransport {
    func start(_ sink: any PluginTransportSink) throws(UVError) {
        throw UVError(code: -ENOENT, operation: "left out of this test")
    }
    var pid: Int32 { 0 }
    var canWrite: Bool { false }
    var queuedBytes: Int { 0 }
    func write(_ bytes: [UInt8]) throws(UVError) { throw UVError.closed("write") }
    func cork() {}
    func uncork() {}
    func closeInput() {}
    func signal(_ number: Int32) {}
    func killStragglers() {}
    func pauseErrors() {}
    func resumeErrors() {}
    func readPendingErrors() {}
    func close() {}
}

/// The notifications the host sent to in-process plugins, in order, for a test to assert (any thread).
package final class ReceivedNotifications: Sendable {
    private let received = Mutex<[ReceivedNotification]>([])

    package init() {}

    /// Keeps the notifications among the lines the host wrote to `plugin`.
    func record(_ bytes: [UInt8], to plugin: String) {
        var start = 0
        var found: [ReceivedNotification] = []
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            let line = bytes[start..<index]
            start = index + 1
            guard
                case .message(.notification(let method, let params), _) = MessageReader.decodeLine(line, lineNumber: 1),
                method != InitializedNotification.method, method != ExitNotification.method
            else { continue }
            found.append(ReceivedNotification(plugin: plugin, method: method, params: params))
        }
        if !found.isEmpty { received.withLock { $0 += found } }
    }

    /// Takes what was received since the last call.
    package func take() -> [ReceivedNotification] {
        received.withLock { all in
            defer { all.removeAll() }
            return all
        }
    }
}
