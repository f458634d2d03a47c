import Glibc
import SwitchyardSystem
import SwitchyardUV

/// A plugin as a child process: its stdin, stdout and stderr as libuv pipes, spawned directly or through the
/// guardian (containment), in a process group of its own.
///
/// It only moves bytes and signals. One rule of its own: a plugin's stdout yields to the loop every 256 KiB (libuv
/// would read 2 MB from one pipe per iteration; a flooding plugin held the loop 7 s on a loaded machine), so the
/// other plugins and the control clients are served between its reads.
///
/// - Important: Loop thread only.
final class ProcessTransport: PluginTransport {
    private let loop: UVLoop
    private let options: UVSpawnOptions
    private weak var guardian: Guardian?
    /// The session it feeds. Strong, and let go in ``close()``: a weak reference would cost every read a weak load and
    /// both objects the slow path of every retain (a side table), on the hottest path of the host.
    private var sink: (any PluginTransportSink)?
    private var process: UVProcess?
    private var outputOpen = false
    /// Bytes read from stdout since the loop last polled in between.
    private var outputSinceYield = 0
    static let outputBytesPerTurn = 256 * 1024

    init(loop: UVLoop, options: UVSpawnOptions, guardian: Guardian?) {
        self.loop = loop
        self.options = options
        self.guardian = guardian
    }

    func start(_ sink: any PluginTransportSink) throws(UVError) {
        // The pipes' and the exit's callbacks hold this transport strongly until the pipes close (``close()``) and
        // the process is reaped: no weak load on each read.
        let onExit: (TerminationStatus) -> Void = { status in self.sink?.exited(status) }
        let process: UVProcess
        if let guardian {
            process = try guardian.spawn(options, onExit: onExit)
        } else {
            process = try UVProcess.spawn(loop: loop, options: options, onExit: onExit)
        }
        self.sink = sink
        self.process = process
        outputOpen = true
        do throws(UVError) {
            try process.stdout?.startReading { event in self.output(event) }
            try process.stderr?.startReading { event in
                switch event {
                case .data(let bytes): self.sink?.errorsReceived(bytes)
                case .eof, .error:
                    self.process?.stderr?.close()
                    self.sink?.errorsEnded()
                }
            }
        } catch {
            self.sink = nil
            throw error
        }
    }

    private func output(_ event: UVPipe.ReadEvent) {
        switch event {
        case .data(let bytes):
            sink?.outputReceived(bytes)
            outputSinceYield += bytes.count
            if outputSinceYield >= Self.outputBytesPerTurn { yieldOutput() }
        case .eof, .error:
            outputOpen = false
            process?.stdout?.close()
            sink?.outputEnded()
        }
    }

    /// Stops reading stdout until the loop has polled once more.
    private func yieldOutput() {
        outputSinceYield = 0
        guard let pipe = process?.stdout else { return }
        pipe.stopReading()
        loop.afterNextPoll { [weak self] in
            guard let self, self.outputOpen else { return }
            self.process?.stdout?.resumeReading()
        }
    }

    var pid: Int32 { process?.pid ?? 0 }

    var canWrite: Bool { process?.stdin?.isOpen ?? false }

    var queuedBytes: Int { process?.stdin?.queuedBytes ?? 0 }

    func write(_ bytes: [UInt8]) throws(UVError) {
        guard let stdin = process?.stdin else { throw UVError.closed("uv_write") }
        try stdin.write(bytes)
    }

    func cork() { process?.stdin?.cork() }

    func uncork() { process?.stdin?.uncork() }

    func closeInput() {
        guard let stdin = process?.stdin, stdin.isOpen else { return }
        try? stdin.shutdown { _ in stdin.close() }
    }

    func signal(_ number: Int32) {
        guard let process, process.terminationStatus == nil else { return }
        try? process.killGroup(number)
    }

    func killStragglers() {
        // The group is the plugin's (its own process group); its leader has exited.
        guard let pid = process?.pid, pid > 0 else { return }
        _ = SystemProcess.kill(-pid, SIGKILL)
    }

    func pauseErrors() { process?.stderr?.stopReading() }

    func resumeErrors() {
        guard let stderr = process?.stderr, stderr.isOpen else { return }
        stderr.resumeReading()
    }

    func readPendingErrors() { process?.stderr?.readBuffered() }

    func close() {
        process?.stdin?.close()
        process?.stdout?.close()
        process?.stderr?.close()
        sink = nil
    }
}
