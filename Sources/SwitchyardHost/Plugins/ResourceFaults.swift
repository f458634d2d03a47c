import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// The resource limits a fault experiment put on one plugin's running process (`plugin/limits`, spec §22.5), each
/// through the strongest means the machine has: a cgroup v2 of its own where the plugins' cgroup delegates the
/// controller, else a soft rlimit (`prlimit(2)`) or a stop/continue duty cycle driven by the host's loop. They belong
/// to one process: its restart runs without them.
///
/// - Important: Loop thread only.
final class ResourceFaults {
    private let loop: UVLoop
    private let logger: Logger
    /// The process the limits are on (0: none), and what healing puts back.
    private var pid: Int32 = 0
    private var group: String?
    private var previousAddressSpace: UInt64?
    private var previousDescriptors: UInt64?
    private weak var session: PluginSession?
    private var dutyCycle: (timer: UVTimer, runMs: UInt64, heldMs: UInt64)?
    /// Whether the duty cycle holds the process stopped now.
    private var held = false

    init(loop: UVLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    /// Replaces the limits on `session`'s process with those of `params` (none: healed), and says how each was put.
    func apply(
        _ params: PluginLimitsRequest.Params, to session: PluginSession, guardian: Guardian?
    ) throws(ResponseError) -> PluginLimitsRequest.Result {
        if session.pid != pid { processEnded() }
        heal()
        pid = session.pid
        self.session = session
        var result = PluginLimitsRequest.Result(pid: pid)
        do throws(SystemError) {
            if let bytes = params.memoryBytes { result.memory = try limitMemory(UInt64(bytes), guardian) }
            if let percent = params.cpuPercent {
                result.cpu = try limitCPU(
                    percent, periodMs: params.cpuPeriodMs ?? PluginLimitsRequest.Params.defaultCPUPeriodMs, guardian)
            }
            if let count = params.descriptors {
                let highest = ResourceLimits.highestDescriptor(of: pid) ?? 2
                let previous = try ResourceLimits.get(.descriptors, of: pid).soft
                try ResourceLimits.setSoft(.descriptors, of: pid, to: UInt64(highest + 1 + count))
                previousDescriptors = previousDescriptors ?? previous
                result.descriptors = .rlimit
            }
        } catch {
            heal()
            throw ResponseError(
                .internalError, "cannot limit plugin '\(session.name)' (pid \(pid)): \(error)",
                data: ["plugin": .string(session.name)])
        }
        let applied = [("memory", result.memory), ("cpu", result.cpu), ("descriptors", result.descriptors)]
            .compactMap { name, mechanism in mechanism.map { "\(name) by \($0.rawValue)" } }
        logger.notice(
            "fault injection: plugin '\(session.name)' (pid \(pid)) limits: \(applied.isEmpty ? "healed" : applied.joined(separator: ", "))"
        )
        return result
    }

    /// `memory.max` in a cgroup of its own, else `RLIMIT_AS` at its address space now plus `bytes`.
    private func limitMemory(
        _ bytes: UInt64, _ guardian: Guardian?
    ) throws(SystemError) -> PluginLimitsRequest.Mechanism {
        if let group = try cgroup(guardian, "memory") {
            try FileSystem.writeExisting("\(group)/memory.max", "\(bytes)")
            // No swap: the limit is met by the OOM killer, not by paging the plugin out.
            try? FileSystem.writeExisting("\(group)/memory.swap.max", "0")
            return .cgroup
        }
        guard let used = ResourceLimits.addressSpace(of: pid) else {
            throw SystemError(errno: ESRCH, operation: "read /proc/\(pid)/status")
        }
        let previous = try ResourceLimits.get(.addressSpace, of: pid).soft
        try ResourceLimits.setSoft(.addressSpace, of: pid, to: used + bytes)
        previousAddressSpace = previousAddressSpace ?? previous
        return .rlimit
    }

    /// `cpu.max` in a cgroup of its own, else the duty cycle.
    private func limitCPU(
        _ percent: Int, periodMs: Int, _ guardian: Guardian?
    ) throws(SystemError) -> PluginLimitsRequest.Mechanism {
        if let group = try cgroup(guardian, "cpu") {
            try FileSystem.writeExisting("\(group)/cpu.max", "\(periodMs * 10 * percent) \(periodMs * 1_000)")
            return .cgroup
        }
        let runMs = UInt64(max(1, periodMs * percent / 100))
        let timer: UVTimer
        do { timer = try UVTimer(loop: loop) } catch {
            throw SystemError(errno: EAGAIN, operation: "start the duty cycle's timer (\(error))")
        }
        dutyCycle = (timer, runMs, UInt64(periodMs) - runMs)
        armDutyCycle(afterMs: runMs)
        return .dutyCycle
    }

    private func cgroup(_ guardian: Guardian?, _ controller: String) throws(SystemError) -> String? {
        guard let made = try guardian?.limitGroup(for: pid, controller: controller) else { return nil }
        group = made
        return made
    }

    // The duty cycle: the process group runs `runMs`, is stopped `heldMs`, and so on, on the host's loop timers. A
    // late loop lengthens a phase, and delays the heartbeat's judgement alike (it counts running time).
    private func armDutyCycle(afterMs milliseconds: UInt64) {
        try? dutyCycle?.timer.start(after: milliseconds) { [weak self] in self?.dutyCycleTurn() }
    }

    private func dutyCycleTurn() {
        guard let cycle = dutyCycle else { return }
        guard let session, session.state == .ready || session.state == .starting else {
            // Stopping (its shutdown must not wait on a stopped process) or gone: the cycle ends, released.
            endDutyCycle()
            return
        }
        held.toggle()
        session.signal(held ? SIGSTOP : SIGCONT)
        armDutyCycle(afterMs: held ? cycle.heldMs : cycle.runMs)
    }

    private func endDutyCycle() {
        dutyCycle?.timer.close()
        dutyCycle = nil
        if held { session?.signal(SIGCONT) }
        held = false
    }

    /// Heals: the duty cycle ends with the process running, its previous soft limits are put back, its cgroup
    /// limits lifted.
    func heal() {
        endDutyCycle()
        guard pid > 0 else { return }
        if let previous = previousAddressSpace { try? ResourceLimits.setSoft(.addressSpace, of: pid, to: previous) }
        if let previous = previousDescriptors { try? ResourceLimits.setSoft(.descriptors, of: pid, to: previous) }
        previousAddressSpace = nil
        previousDescriptors = nil
        if let group {
            try? FileSystem.writeExisting("\(group)/memory.max", "max")
            try? FileSystem.writeExisting("\(group)/cpu.max", "max")
        }
    }

    /// The process the limits were on has ended (`pid`, or any when nil): nothing is left to heal; its cgroup goes
    /// once empty (else with the plugins' cgroup when the guardian ends).
    func processEnded(_ ended: Int32? = nil) {
        guard ended == nil || ended == pid else { return }
        dutyCycle?.timer.close()
        dutyCycle = nil
        held = false
        previousAddressSpace = nil
        previousDescriptors = nil
        if let group { FileSystem.removeDirectory(group) }
        group = nil
        pid = 0
        session = nil
    }
}
