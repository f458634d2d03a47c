package import SwitchyardUV

/// What carries a ``PluginSession``: the plugin's three byte streams and its process, whatever they are made of.
///
/// The session decides; the transport only moves bytes and delivers signals. Two kinds exist: a process with
/// pipes (``ProcessTransport``, what `switchyard run` uses) and a plugin running inside the host's own process on a
/// thread of its own (the in-process test tier). Because a session touches nothing else, swapping what carries a
/// live session is a local change.
///
/// - Important: Loop thread only, like the session.
package protocol PluginTransport: AnyObject {
    /// Starts the plugin and begins delivering what it writes to `sink` (held weakly). A failure to start at all
    /// (no such executable, out of descriptors) is thrown; later failures arrive as sink events.
    func start(_ sink: any PluginTransportSink) throws(UVError)
    /// The plugin's process id (0 once it is gone, or for a plugin without a process of its own).
    var pid: Int32 { get }
    /// Whether the plugin's input is open for writing.
    var canWrite: Bool { get }
    /// Bytes written to the plugin's input that it has not read yet.
    var queuedBytes: Int { get }
    /// Writes bytes to the plugin's input, queueing what it does not take at once.
    func write(_ bytes: [UInt8]) throws(UVError)
    /// Holds writes back until the matching ``uncork()``, which sends them together (nests).
    func cork()
    func uncork()
    /// Closes the plugin's input once queued writes have left (it reads end of file).
    func closeInput()
    /// Sends a signal to the plugin's process group.
    func signal(_ number: Int32)
    /// Kills what is left of the plugin's process group after its main process exited (descendants holding its
    /// pipes open must not keep the session alive).
    func killStragglers()
    /// Stops and resumes reading the plugin's error stream.
    func pauseErrors()
    func resumeErrors()
    /// Delivers now what the plugin already wrote to its error stream (a traceback printed just before an answer
    /// sits in the other pipe, and its read callback may not have run yet).
    func readPendingErrors()
    /// Releases every stream; called once the session has ended.
    func close()
}

/// What a transport delivers: the session's inputs, besides time.
package protocol PluginTransportSink: AnyObject {
    /// Bytes the plugin wrote to its output (the protocol stream).
    func outputReceived(_ bytes: [UInt8])
    /// Its output reached end of file (or failed).
    func outputEnded()
    /// Bytes the plugin wrote to its error stream.
    func errorsReceived(_ bytes: [UInt8])
    /// Its error stream reached end of file (or failed).
    func errorsEnded()
    /// The plugin's process ended.
    func exited(_ status: TerminationStatus)
}

/// Makes what carries a plugin instead of a child process, for the plugins it knows (nil: a child process as usual).
/// Called on the loop's thread at every start of the plugin, so each start gets a fresh plugin. The in-process test
/// tier uses it to run Swift plugins inside the test process.
package typealias PluginTransportFactory =
    @Sendable (_ plugin: PluginManifest, _ loop: UVLoop) -> (any PluginTransport)?

/// The timers a session arms. One of each at most; arming one again moves it.
enum SessionTimer: Hashable, CaseIterable {
    /// The earliest deadline of a pending request.
    case deadline
    /// The heartbeat's tick (repeating).
    case heartbeat
    /// The next check of a write queue that stopped shrinking.
    case writeStall
    /// The next step of the shutdown ladder.
    case ladder
    /// The pipes' last chance to reach end of file after the process exited.
    case exitGrace
    /// The end of a second whose stderr budget was spent.
    case stderrPause
}

/// Time as a session sees it, and its timers.
///
/// Two clocks (spec §6.1): the *running* clock, which excludes the host's own stalls, measures deadlines and
/// heartbeats, so a stalled host never condemns a healthy plugin; the *wall* clock refills rate budgets, since the
/// plugin really had that time to send in. Verdicts wait for ``afterNextPoll(_:)``: what the plugin already sent is
/// read before it is judged.
protocol PluginClock: AnyObject {
    /// Milliseconds on the running clock.
    var runningNow: UInt64 { get }
    /// Milliseconds on the wall clock.
    var wallNow: UInt64 { get }
    /// Nanoseconds, for start-up figures.
    var nanoseconds: UInt64 { get }
    /// Arms `timer` to fire after `milliseconds` (again every `repeatMs` if given); replaces an armed one.
    func arm(_ timer: SessionTimer, afterMs milliseconds: UInt64, repeatMs: UInt64?)
    /// Disarms `timer`.
    func cancel(_ timer: SessionTimer)
    /// Runs `job` once the loop has polled for input again.
    func afterNextPoll(_ job: @escaping () -> Void)
    /// Where fired timers go (the session sets it).
    var onFire: (SessionTimer) -> Void { get set }
    /// Releases every timer.
    func close()
}

extension PluginClock {
    func arm(_ timer: SessionTimer, afterMs milliseconds: UInt64) { arm(timer, afterMs: milliseconds, repeatMs: nil) }
}
