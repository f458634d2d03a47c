import CLibUV
public import SwitchyardSystem
import Glibc
import Synchronization

/// How a child process ended.
///
/// A non-zero exit code is a normal result, not a thrown error.
public enum TerminationStatus: Sendable, Equatable, CustomStringConvertible {
    case exited(Int64)
    case signaled(Int32)

    public var isSuccess: Bool { self == .exited(0) }

    public var description: String {
        switch self {
        case .exited(let code): "exited with code \(code)"
        case .signaled(let signal): "killed by signal \(signal) (\(signalName(signal)))"
        }
    }
}

/// The name of a signal number, e.g. `SIGKILL`.
public func signalName(_ number: Int32) -> String {
    switch number {
    case SIGHUP: "SIGHUP"
    case SIGINT: "SIGINT"
    case SIGQUIT: "SIGQUIT"
    case SIGILL: "SIGILL"
    case SIGTRAP: "SIGTRAP"
    case SIGABRT: "SIGABRT"
    case SIGBUS: "SIGBUS"
    case SIGFPE: "SIGFPE"
    case SIGKILL: "SIGKILL"
    case SIGSEGV: "SIGSEGV"
    case SIGPIPE: "SIGPIPE"
    case SIGTERM: "SIGTERM"
    case SIGSTOP: "SIGSTOP"
    case SIGCONT: "SIGCONT"
    default: "signal \(number)"
    }
}

/// Everything needed to start a child, as values (after swift-subprocess's `Configuration`).
public struct UVSpawnOptions: Sendable {
    /// What each of the child's fds 0, 1 and 2 is connected to.
    public enum Stdio: Sendable {
        /// A new socketpair; the host end is returned as a ``UVPipe``.
        case pipe
        /// `/dev/null`.
        case ignore
        /// The host's own descriptor with the same number.
        case inherit
    }

    /// An absolute path, or a name looked up in the child's `PATH` (never through a shell).
    public var executable: String
    /// `argv[1...]`.
    public var arguments: [String]
    /// The child's complete environment: nothing is inherited implicitly.
    public var environment: [String: String]
    public var workingDirectory: String?
    /// Start the child in a new session, so it leads its own process group (`UV_PROCESS_DETACHED`): a terminal's
    /// Ctrl-C does not reach it directly and ``UVProcess/killGroup(_:)`` reaches its descendants too.
    public var newProcessGroup: Bool
    public var stdin: Stdio
    public var stdout: Stdio
    public var stderr: Stdio
    /// Fork the child into this PID namespace (nil: the host's own). See ``PIDNamespace``.
    public var pidNamespace: PIDNamespace?

    public init(
        executable: String, arguments: [String] = [], environment: [String: String] = [:],
        workingDirectory: String? = nil, newProcessGroup: Bool = true,
        stdin: Stdio = .pipe, stdout: Stdio = .pipe, stderr: Stdio = .pipe
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.newProcessGroup = newProcessGroup
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// A child process (`uv_process_t`) with its stdio pipes.
///
/// The loop is the only reaper: the handle closes only after the exit callback has run (closing earlier leaves an
/// unreapable zombie, libuv#1911). ``close()`` on a running child therefore kills it and closes on exit.
public final class UVProcess: UVHandle {
    /// The host's end of the child's stdin, if piped.
    public let stdin: UVPipe?
    /// The host's end of the child's stdout, if piped.
    public let stdout: UVPipe?
    /// The host's end of the child's stderr, if piped.
    public let stderr: UVPipe?
    /// The child's process id (valid until it is reaped; never reused by libuv before then).
    public private(set) var pid: Int32 = 0
    /// Set once the exit callback has run.
    public private(set) var terminationStatus: TerminationStatus?
    private var exitHandler: ((TerminationStatus) -> Void)?
    private var closeRequested = false
    private let leadsProcessGroup: Bool

    private init(loop: UVLoop, stdin: UVPipe?, stdout: UVPipe?, stderr: UVPipe?, group: Bool) {
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.leadsProcessGroup = group
        super.init(loop: loop, type: UV_PROCESS)
    }

    /// Spawns a child (`uv_spawn`: fork + exec, which blocks the loop for a time that grows with host RSS).
    ///
    /// Before forking, every descriptor above 2 is marked close-on-exec, so the child gets exactly 0, 1 and 2
    /// (libuv closes nothing for us: libuv#3716).
    ///
    /// - Throws: exec failures such as `ENOENT` synchronously; all handles created are closed again.
    public static func spawn(
        loop: UVLoop, options: UVSpawnOptions, onExit: @escaping (TerminationStatus) -> Void
    ) throws(UVError) -> UVProcess {
        func makePipe(_ mode: UVSpawnOptions.Stdio) throws(UVError) -> UVPipe? {
            mode == .pipe ? try UVPipe(loop: loop) : nil
        }
        let stdinPipe = try makePipe(options.stdin)
        let stdoutPipe: UVPipe?
        let stderrPipe: UVPipe?
        do throws(UVError) {
            stdoutPipe = try makePipe(options.stdout)
            do throws(UVError) {
                stderrPipe = try makePipe(options.stderr)
            } catch {
                stdoutPipe?.close()
                throw error
            }
        } catch {
            stdinPipe?.close()
            throw error
        }
        let process = UVProcess(
            loop: loop, stdin: stdinPipe, stdout: stdoutPipe, stderr: stderrPipe, group: options.newProcessGroup)
        process.exitHandler = onExit
        do throws(UVError) {
            try process.start(options)
        } catch {
            stdinPipe?.close()
            stdoutPipe?.close()
            stderrPipe?.close()
            throw error
        }
        return process
    }

    private func start(_ options: UVSpawnOptions) throws(UVError) {
        guard let raw else { throw UVError.closed("uv_spawn") }
        let handle = raw.assumingMemoryBound(to: uv_process_t.self)

        let argv = CStringArray([options.executable] + options.arguments)
        let envp = CStringArray(options.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
        defer {
            argv.free()
            envp.free()
        }
        let containers = UnsafeMutablePointer<uv_stdio_container_t>.allocate(capacity: 3)
        defer { containers.deallocate() }
        func container(
            _ mode: UVSpawnOptions.Stdio, pipe: UVPipe?, fd: Int32, childReads: Bool
        )
            -> uv_stdio_container_t
        {
            var result = uv_stdio_container_t()
            switch mode {
            case .pipe:
                let direction = childReads ? UV_READABLE_PIPE.rawValue : UV_WRITABLE_PIPE.rawValue
                result.flags = uv_stdio_flags(UV_CREATE_PIPE.rawValue | direction)
                result.data.stream = pipe?.stream
            case .ignore:
                result.flags = UV_IGNORE
            case .inherit:
                result.flags = UV_INHERIT_FD
                result.data.fd = fd
            }
            return result
        }
        containers[0] = container(options.stdin, pipe: stdin, fd: 0, childReads: true)
        containers[1] = container(options.stdout, pipe: stdout, fd: 1, childReads: false)
        containers[2] = container(options.stderr, pipe: stderr, fd: 2, childReads: false)

        var spawnOptions = uv_process_options_t()
        spawnOptions.exit_cb = processExitCallback
        spawnOptions.stdio_count = 3
        spawnOptions.stdio = containers
        spawnOptions.args = argv.pointer
        spawnOptions.env = envp.pointer
        spawnOptions.flags = options.newProcessGroup ? UInt32(UV_PROCESS_DETACHED.rawValue) : 0

        let status: Int32 = SpawnLock.withLock {
            markAllDescriptorsCloseOnExec()
            return PIDNamespace.forking(into: options.pidNamespace) {
                spawn(handle, &spawnOptions, argv: argv, workingDirectory: options.workingDirectory)
            }
        }
        // uv_spawn initialises the handle even when it fails, so it must be closed either way (libuv#5055).
        adopt()
        if status < 0 {
            exitHandler = nil
            terminationStatus = .exited(127)
            super.close()
            throw UVError(code: status, operation: "uv_spawn \(options.executable)")
        }
        pid = handle.pointee.pid
        // Recorded until reaped: the children that are not in here were adopted (see
        // ``SystemProcess/endAdoptedOrphans()``).
        SystemProcess.spawnedByLoop.withLock { _ = $0.insert(pid) }
    }

    private func spawn(
        _ handle: UnsafeMutablePointer<uv_process_t>, _ spawnOptions: inout uv_process_options_t,
        argv: CStringArray, workingDirectory: String?
    ) -> Int32 {
        if let directory = workingDirectory {
            return directory.withCString { cwd in
                spawnOptions.cwd = cwd
                guard let file = argv.pointer[0] else { return UV_EINVAL.rawValue }
                spawnOptions.file = UnsafePointer(file)
                return uv_spawn(loop.raw, handle, &spawnOptions)
            }
        }
        guard let file = argv.pointer[0] else { return UV_EINVAL.rawValue }
        spawnOptions.file = UnsafePointer(file)
        return uv_spawn(loop.raw, handle, &spawnOptions)
    }

    /// Sends `signal` to the child (`uv_process_kill`, which refuses once the child is reaped, so a reused pid is
    /// never hit).
    public func kill(_ signal: Int32) throws(UVError) {
        assertOnLoopThread()
        guard isOpen, terminationStatus == nil, let raw else { throw UVError.closed("uv_process_kill") }
        try UVError.check(uv_process_kill(raw.assumingMemoryBound(to: uv_process_t.self), signal), "uv_process_kill")
    }

    /// Sends `signal` to the child's whole process group (only if it was started with a new process group, and
    /// only before it is reaped).
    public func killGroup(_ signal: Int32) throws(UVError) {
        assertOnLoopThread()
        guard isOpen, terminationStatus == nil, pid > 0 else { throw UVError.closed("uv_kill") }
        guard leadsProcessGroup else { return try kill(signal) }
        try UVError.check(uv_kill(-pid, signal), "uv_kill(-pgid)")
    }

    /// Kills the child if it still runs, and closes the handle once it has been reaped.
    public override func close() {
        guard isOpen else { return }
        if terminationStatus == nil {
            closeRequested = true
            if let raw {
                uv_process_kill(raw.assumingMemoryBound(to: uv_process_t.self), SIGKILL)
            }
            return
        }
        super.close()
    }

    fileprivate func exited(status: Int64, signal: Int32) {
        let termination: TerminationStatus = signal != 0 ? .signaled(signal) : .exited(status)
        terminationStatus = termination
        SystemProcess.spawnedByLoop.withLock { _ = $0.remove(pid) }
        let handler = exitHandler
        exitHandler = nil
        handler?(termination)
        // Reaped: now the handle may close (rule: never before the exit callback).
        super.close()
    }

    override func willClose() { exitHandler = nil }
    override var kindName: String { "process" }
}

private let processExitCallback: uv_exit_cb = { handle, status, signal in
    guard let handle else { return }
    wrapper(handle.pointee.data, as: UVProcess.self)?.exited(status: status, signal: signal)
}

/// A NULL-terminated `char*[]` owned until ``free()``.
private struct CStringArray {
    let pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointer = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() {
            pointer[index] = strdup(string)
        }
        pointer[strings.count] = nil
    }

    func free() {
        for index in 0..<count { Glibc.free(pointer[index]) }
        pointer.deallocate()
    }
}
