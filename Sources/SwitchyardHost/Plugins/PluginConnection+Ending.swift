import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

// Ending: kills, the shutdown ladder, exit classification.
extension PluginConnection {
    // MARK: - Ending

    /// Kills the process group at once (SIGKILL). The reason is kept for the termination report.
    func kill(reason: String) {
        // One verdict per process, logged once: later evidence against a condemned plugin changes nothing.
        guard state != .terminated, killReason == nil, let process, process.terminationStatus == nil else { return }
        killReason = reason
        logger.warning("killing plugin '\(name)': \(reason)")
        try? process.killGroup(SIGKILL)
    }

    /// Sends a signal to the plugin's process group (for fault experiments: SIGSTOP, SIGCONT).
    func signal(_ number: Int32) {
        guard let process, process.terminationStatus == nil else { return }
        try? process.killGroup(number)
    }

    /// Runs the shutdown ladder: `shutdown` request, `exit` notification, stdin closed, SIGTERM after `graceMs`,
    /// SIGKILL after another `graceMs`. Completion is the `.terminated` event.
    func stop(graceMs: Int = 2_000, shutdownTimeoutMs: Int = 1_000) {
        guard !stopRequested, state != .terminated else { return }
        stopRequested = true
        let steps = TeardownStep.ladder(
            graceMs: graceMs, shutdownTimeoutMs: shutdownTimeoutMs, ready: state == .ready, term: SIGTERM, kill: SIGKILL)
        state = .stopping
        runTeardown(steps[...], previous: nil)
    }

    /// Runs the ladder one step at a time: each step acts, then waits for the exit (which ends the ladder through
    /// ``checkTerminated()``) or for its time to run out.
    func runTeardown(_ steps: ArraySlice<TeardownStep>, previous: TeardownStep?) {
        guard let step = steps.first, state != .terminated, let process, process.terminationStatus == nil else { return }
        let rest = steps.dropFirst()
        switch step {
        case .shutdownRequest(let waitMs):
            sendRaw(method: ShutdownRequest.method, params: .object(JSONObject()), timeoutMs: waitMs) { [weak self] _ in
                guard let self, self.state != .terminated else { return }
                _ = self.write(.notification(method: ExitNotification.method, params: nil))
                self.runTeardown(rest, previous: step)
            }
            return
        case .closeStdin:
            if let stdin = process.stdin, stdin.isOpen {
                try? stdin.shutdown { _ in stdin.close() }
            }
        case .signal(let number, _):
            switch (previous, number) {
            case (.closeStdin?, _):
                logger.notice("plugin '\(name)' did not exit after stdin closed; sending SIGTERM")
            case (.signal?, SIGKILL):
                logger.warning("plugin '\(name)' ignored SIGTERM; sending SIGKILL")
                if killReason == nil { killReason = "ignored SIGTERM during shutdown" }
            default:
                logger.notice("plugin '\(name)': shutdown ladder sends signal \(number)")
            }
            try? process.killGroup(number)
        }
        let waitMs: Int
        switch step {
        case .shutdownRequest(let wait), .closeStdin(let wait), .signal(_, let wait): waitMs = wait
        }
        guard !rest.isEmpty else { return }
        if ladderTimer == nil { ladderTimer = try? UVTimer(loop: loop) }
        try? ladderTimer?.start(after: UInt64(max(0, waitMs))) { [weak self] in self?.runTeardown(rest, previous: step) }
    }

    func processExited(_ status: TerminationStatus) {
        exitStatus = status
        resumeStderr()
        // Descendants that still hold the pipes open must not keep the connection alive (the group is the plugin's).
        if let pid = process?.pid, pid > 0 {
            _ = SystemProcess.kill(-pid, SIGKILL)
        }
        // exit_cb can fire before the last stdout bytes are read: give the pipes a moment to reach EOF.
        if !(stdoutClosed && stderrClosed), let timer = try? UVTimer(loop: loop) {
            exitGraceTimer = timer
            try? timer.start(after: 200) { [weak self] in
                guard let self else { return }
                self.stdoutClosed = true
                self.stderrClosed = true
                self.checkTerminated()
            }
        }
        checkTerminated()
    }

    func checkTerminated() {
        guard state != .terminated, let exitStatus, stdoutClosed, stderrClosed else { return }
        let wasStarting = state == .starting
        state = .terminated
        process?.stdin?.close()
        process?.stdout?.close()
        process?.stderr?.close()
        deadlineTimer?.close()
        deadlineTimer = nil
        ladderTimer?.close()
        ladderTimer = nil
        heartbeatTimer?.close()
        heartbeatTimer = nil
        stderrPauseTimer?.close()
        stderrPauseTimer = nil
        writeStallTimer?.close()
        writeStallTimer = nil
        exitGraceTimer?.close()
        exitGraceTimer = nil

        let cause: PluginTermination.Cause
        if let killReason {
            cause = .killed(killReason)
        } else if stopRequested {
            cause = .stopped
        } else {
            switch exitStatus {
            case .exited(0): cause = .exitedCleanly
            case .exited: cause = .exitedWithError
            case .signaled: cause = .crashed
            }
        }
        let termination = PluginTermination(status: exitStatus, cause: cause, stderrTail: stderr.tail())
        if wasStarting && !handshakeFailureReported {
            handshakeFailureReported = true
            // Every byte of stderr has been read by now: a traceback printed at import is all in the error.
            let error = withStderrTail(.handshake(name, .pluginUnavailable, "it \(termination) before answering 'initialize'"))
            logger.error("\(error.message)\(error.authorDetails.map { "\n" + $0 } ?? "")")
            onEvent(.handshakeFailed(error))
        }
        endpoint.close(.pluginUnavailable(name, "\(termination)"))
        switch cause {
        case .stopped, .exitedCleanly: logger.debug("plugin '\(name)' \(termination)")
        default: logger.warning("plugin '\(name)' \(termination)")
        }
        onEvent(.terminated(termination))
    }
}
