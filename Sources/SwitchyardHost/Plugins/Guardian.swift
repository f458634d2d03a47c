import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// How a host makes sure that no descendant of its plugins outlives it, strongest first.
public enum ContainmentMechanism: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Plugins live in a PID namespace whose init is the guardian: when it exits (host gone, or shutting down) the
    /// kernel kills every process in it, whatever its session or parent. Needs CAP_SYS_ADMIN.
    case pidNamespace = "pid-namespace"
    /// Plugins are moved into a cgroup of their own right after spawn; the guardian empties it through
    /// `cgroup.kill`. Needs a writable cgroup v2 directory.
    case cgroup
    /// The guardian kills each plugin's process group; the host (a child subreaper) kills orphans reparented to it
    /// at a graceful end. A descendant that left its group (setsid) survives a SIGKILLed host.
    case processGroup = "process-group"
    /// No guardian at all (its executable is missing): plugins rely on exiting at stdin EOF.
    case none

    public var description: String { rawValue }
}

/// The host side of `switchyard-guardian` (see its `main.c`) and of the containment it enforces.
///
/// The guardian's own death is survivable: in a PID namespace it takes every plugin with it (the kernel's rule) and
/// the namespace accepts no more forks, so the host starts a new guardian in a new namespace and the supervisors
/// restart the plugins (not counted toward their restart intensity, see ``lostNamespace(since:)``); with the other
/// mechanisms the plugins live on and the new guardian is told about them again. Either way a host SIGKILLed later
/// still takes everything with it.
///
/// - Important: Loop thread only.
final class Guardian {
    let mechanism: ContainmentMechanism
    /// Each stronger mechanism that is not in effect, and why.
    let notUsed: [(ContainmentMechanism, String)]
    /// Bumped for every guardian started: a plugin spawned under an earlier one died with its namespace.
    private(set) var generation = 0
    private let loop: UVLoop
    private let logger: Logger
    private let executable: String?
    private var process: UVProcess?
    private var namespace: PIDNamespace?
    /// The plugins' cgroup v2, which the guardian kills whole (nil with another mechanism).
    let cgroup: String?
    /// Where new plugins go: the plugins' cgroup itself, or its `plugins` leaf once a resource limit gave a plugin a
    /// cgroup of its own beside it (Guardian+Limits.swift).
    var plugins: String?
    /// Plugin process groups, told to every new guardian.
    private var groups: Set<Int32> = []
    private var closing = false
    /// Whether this host made the process a child subreaper (so the orphans it adopts are its plugins').
    private var subreaper = false
    private var restartTimes: [UInt64] = []

    private init(
        mechanism: ContainmentMechanism, notUsed: [(ContainmentMechanism, String)], loop: UVLoop, logger: Logger,
        executable: String?, cgroup: String?
    ) {
        self.mechanism = mechanism
        self.notUsed = notUsed
        self.loop = loop
        self.logger = logger
        self.executable = executable
        self.cgroup = cgroup
        self.plugins = cgroup
    }

    /// The wire form for `host/status`.
    var status: HostStatusRequest.Containment {
        HostStatusRequest.Containment(
            mechanism: mechanism.rawValue,
            notUsed: Dictionary(notUsed.map { ($0.0.rawValue, $0.1) }, uniquingKeysWith: { first, _ in first }),
            guardian: process?.pid)
    }

    /// The mechanism `SWITCHYARD_CONTAINMENT` asks for (nil: unset or `auto`).
    static func requestedByEnvironment() -> ContainmentMechanism? {
        SystemProcess.environmentValue("SWITCHYARD_CONTAINMENT").flatMap(ContainmentMechanism.init(rawValue:))
    }

    /// Starts the guardian with the strongest mechanism available — a cgroup v2, else process groups; a PID
    /// namespace only when `requested` — (or `requested` only, falling back to `process-group` if that is not
    /// available), and logs which one is in effect.
    ///
    /// - Parameter ownsProcess: whether this host is the only one in the process (the CLI): only then does it make
    ///   the whole process a child subreaper, which in a process shared with other code (tests, an embedding app)
    ///   would adopt orphans that are not the host's business.
    static func start(
        loop: UVLoop, productsDirectory: String, requested: ContainmentMechanism?, ownsProcess: Bool, logger: Logger
    ) -> Guardian {
        let candidates = [
            "\(productsDirectory)/switchyard-guardian",
            SystemProcess.executablePath.map { "\(FileSystem.parentDirectory(of: $0))/switchyard-guardian" },
            FileSystem.findExecutable("switchyard-guardian", path: SystemProcess.environmentValue("PATH")),
        ].compactMap { $0 }
        guard let executable = candidates.first(where: FileSystem.isExecutable) else {
            let reason = "switchyard-guardian not found"
            logger.warning("\(reason); plugins rely on exiting at stdin EOF if the host dies")
            let notUsed = [ContainmentMechanism.pidNamespace, .cgroup, .processGroup].map { ($0, reason) }
            return Guardian(
                mechanism: .none, notUsed: notUsed, loop: loop, logger: logger, executable: nil, cgroup: nil)
        }
        var notUsed: [(ContainmentMechanism, String)] = []
        // The PID namespace is the strongest mechanism but only on request: the plugins' /proc is still the host's
        // (a mount namespace cannot be entered by a multithreaded process), and libdispatch's worker monitor reads
        // /proc/TID/stat with namespace-local thread ids; under load it then crashes a healthy Swift plugin
        // ("workq: registered worker exited prematurely"). A host must not create the faults it isolates.
        let order: [ContainmentMechanism] = [.pidNamespace, .cgroup, .processGroup]
        for candidate in order {
            if candidate == .pidNamespace && requested != .pidNamespace {
                notUsed.append(
                    (
                        candidate,
                        "only on request (SWITCHYARD_CONTAINMENT=pid-namespace): the plugins would see the host's /proc"
                    ))
                continue
            }
            if let requested, requested != candidate, candidate != .processGroup {
                notUsed.append((candidate, "SWITCHYARD_CONTAINMENT/options ask for \(requested)"))
                continue
            }
            var cgroup: String?
            if candidate == .cgroup {
                switch makeCgroup() {
                case .success(let path): cgroup = path
                case .failure(let reason):
                    notUsed.append((candidate, reason.description))
                    continue
                }
            }
            let guardian = Guardian(
                mechanism: candidate, notUsed: notUsed, loop: loop, logger: logger, executable: executable,
                cgroup: cgroup)
            if let failure = guardian.spawnGuardian() {
                if let cgroup { FileSystem.removeDirectory(cgroup) }
                notUsed.append((candidate, failure))
                continue
            }
            if candidate == .processGroup && ownsProcess {
                guardian.subreaper = ProcessContainment.becomeSubreaper()
                if !guardian.subreaper {
                    logger.warning("cannot become a child subreaper: orphans of plugins are not ended at shutdown")
                }
            }
            let reasons = notUsed.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
            logger.info("containment: \(candidate)\(reasons.isEmpty ? "" : " (not used: \(reasons))")")
            return guardian
        }
        // process-group fails only if the guardian cannot be spawned at all.
        logger.warning("cannot start switchyard-guardian; plugins rely on exiting at stdin EOF if the host dies")
        return Guardian(mechanism: .none, notUsed: notUsed, loop: loop, logger: logger, executable: nil, cgroup: nil)
    }

    /// A fresh cgroup under this process's own cgroup v2 directory, or why there is none.
    private static func makeCgroup() -> Result<String, CgroupUnavailable> {
        // The v2 hierarchy's mount point (/sys/fs/cgroup on unified systems, /sys/fs/cgroup/unified on hybrid
        // ones): mountinfo field 5 is the mount point, and the filesystem type follows the " - " separator.
        guard let mountinfo = try? FileSystem.readFile("/proc/self/mountinfo") else {
            return .failure(CgroupUnavailable("cannot read /proc/self/mountinfo"))
        }
        let mount = String(decoding: mountinfo, as: UTF8.self).split(separator: "\n").lazy.compactMap {
            line -> String? in
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { return nil }
            let fields = halves[0].split(separator: " ")
            return fields.count > 4 ? String(fields[4]) : nil
        }.first
        guard let mount else { return .failure(CgroupUnavailable("no cgroup v2 hierarchy is mounted")) }
        guard let membership = try? FileSystem.readFile("/proc/self/cgroup"),
            let own = String(decoding: membership, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix("0::")
            })
        else { return .failure(CgroupUnavailable("this process is in no cgroup v2 group")) }
        let relative = own.dropFirst(3)
        let parent = relative == "/" ? mount : mount + relative
        // Several hosts may share a process (tests): a random suffix keeps their cgroups apart.
        let path = "\(parent)/switchyard-\(SystemProcess.currentPID)-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try FileSystem.makeDirectory(path, mode: 0o755)
        } catch {
            return .failure(CgroupUnavailable("cannot create \(path): \(error)"))
        }
        guard FileSystem.exists("\(path)/cgroup.kill") else {
            FileSystem.removeDirectory(path)
            return .failure(CgroupUnavailable("no cgroup.kill (kernel before 5.14)"))
        }
        return .success(path)
    }

    private struct CgroupUnavailable: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Spawns a guardian for ``mechanism``; returns why it failed, or nil.
    private func spawnGuardian() -> String? {
        guard let executable else { return "switchyard-guardian not found" }
        var arguments: [String] = []
        switch mechanism {
        case .pidNamespace: arguments = ["--pid-namespace"]
        case .cgroup: arguments = ["--cgroup", cgroup ?? ""]
        case .processGroup, .none: break
        }
        let options = UVSpawnOptions(
            executable: executable, arguments: arguments, environment: [:], newProcessGroup: true, stdin: .pipe,
            stdout: .ignore, stderr: .inherit)
        generation += 1
        let current = generation
        let onExit: (TerminationStatus) -> Void = { [weak self] status in
            self?.guardianExited(status, generation: current)
        }
        do {
            let process: UVProcess
            if mechanism == .pidNamespace {
                let spawned = try PIDNamespace.spawnInit(loop: loop, options: options, onExit: onExit)
                process = spawned.process
                namespace = spawned.namespace
            } else {
                process = try UVProcess.spawn(loop: loop, options: options, onExit: onExit)
            }
            // The guardian must never keep the loop (and so the host) alive.
            process.keepsLoopAlive = false
            process.stdin?.keepsLoopAlive = false
            // A guardian replaced before its exit was reported (its namespace found dead at a spawn) leaves its stdin.
            self.process?.stdin?.close()
            self.process = process
            for group in groups { send("+\(group)\n") }
            if generation > 1 { logger.notice("switchyard-guardian restarted: pid \(process.pid)") }
            return nil
        } catch {
            return "\(error)"
        }
    }

    private func guardianExited(_ status: TerminationStatus, generation ended: Int) {
        guard !closing, ended == generation else { return }
        // Its stdin pipe is the one handle the dead guardian leaves (the process handle closes once reaped).
        process?.stdin?.close()
        process = nil
        let now = loop.now
        restartTimes = restartTimes.filter { now &- $0 < 10_000 } + [now]
        guard restartTimes.count <= 5 else {
            logger.error("switchyard-guardian ended (\(status)) 5 times within 10 s; containment is lost")
            return
        }
        let consequence = mechanism == .pidNamespace ? "its namespace's plugins died with it; " : ""
        logger.warning("switchyard-guardian ended (\(status)); \(consequence)starting another")
        if let failure = spawnGuardian() { logger.error("cannot start another switchyard-guardian: \(failure)") }
    }

    /// Spawns a plugin inside the containment: into the guardian's PID namespace (starting a new guardian first if
    /// the namespace is dead), or into the cgroup right after the spawn.
    func spawn(_ options: UVSpawnOptions, onExit: @escaping (TerminationStatus) -> Void) throws(UVError) -> UVProcess {
        var options = options
        if mechanism == .pidNamespace {
            if process == nil, !closing, let failure = spawnGuardian() {
                logger.error("cannot start another switchyard-guardian: \(failure)")
            }
            options.pidNamespace = namespace
        }
        let process: UVProcess
        do throws(UVError) {
            process = try UVProcess.spawn(loop: loop, options: options, onExit: onExit)
        } catch  where error.code == -ENOMEM && mechanism == .pidNamespace && !closing {
            // The namespace's init has died (no fork into it succeeds any more), and its exit callback has not run
            // yet: start the next guardian now and spawn into its namespace.
            logger.warning("the plugins' PID namespace has ended; starting another switchyard-guardian")
            if let failure = spawnGuardian() { logger.error("cannot start another switchyard-guardian: \(failure)") }
            options.pidNamespace = namespace
            process = try UVProcess.spawn(loop: loop, options: options, onExit: onExit)
        }
        switch mechanism {
        case .cgroup:
            // uv_spawn has no CLONE_INTO_CGROUP: between exec and this move the plugin runs outside the cgroup, and
            // anything it forks in that window stays outside. Its process group is registered too, as a backstop.
            if let plugins {
                do { try FileSystem.writeExisting("\(plugins)/cgroup.procs", "\(process.pid)") } catch {
                    logger.warning("cannot move pid \(process.pid) into \(plugins): \(error)")
                }
            }
            watch(processGroup: process.pid)
        case .processGroup:
            watch(processGroup: process.pid)
        case .pidNamespace, .none:
            // In the namespace the guardian sees other pids; it needs none of them anyway.
            break
        }
        return process
    }

    /// Whether a plugin spawned under guardian `generation` was killed because its PID namespace ended (the
    /// guardian died), rather than by its own fault.
    func lostNamespace(since spawnGeneration: Int) -> Bool {
        guard mechanism == .pidNamespace else { return false }
        if spawnGeneration != generation { return true }
        guard let process else { return true }
        return process.terminationStatus != nil || SystemProcess.isExiting(process.pid)
    }

    var pid: Int32? { process?.pid }

    private func watch(processGroup pgid: Int32) {
        groups.insert(pgid)
        send("+\(pgid)\n")
    }

    func release(processGroup pgid: Int32) {
        guard groups.remove(pgid) != nil else { return }
        send("-\(pgid)\n")
    }

    private func send(_ text: String) {
        try? process?.stdin?.write(Array(text.utf8))
    }

    /// Closes the guardian's stdin: it ends whatever it still contains (nothing, after a clean shutdown) and exits.
    /// With `process-group`, orphans reparented to this (subreaper) host are ended too.
    func close() {
        closing = true
        if subreaper {
            let ended = SystemProcess.endAdoptedOrphans()
            if ended > 0 { logger.notice("ended \(ended) orphaned plugin descendants") }
        }
        guard let process, let stdin = process.stdin, stdin.isOpen else { return }
        // Keep the loop running until the guardian has read EOF and exited, so it ends cleanly and is reaped.
        process.keepsLoopAlive = true
        stdin.keepsLoopAlive = true
        try? stdin.shutdown { _ in stdin.close() }
    }
}
