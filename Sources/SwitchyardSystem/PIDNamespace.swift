import CSwitchyardSystem
import Glibc

/// A PID namespace whose init (PID 1) is a child of this process, for containing every descendant of the
/// processes spawned into it: when its init exits, the kernel SIGKILLs every process in the namespace, including
/// ones that called `setsid()` or double-forked, and no fork into it succeeds any more.
///
/// A thread's "PID namespace for children" is per thread, and `uv_spawn` forks from the calling thread, so the
/// namespace is entered only around each fork (the libuv wrapper's `UVSpawnOptions.pidNamespace`) and left at
/// once. It must not stay entered: while a thread's namespace for children differs from its own, the kernel refuses to let that thread
/// create threads (`clone(CLONE_THREAD)` fails with EINVAL), and libuv's thread pool or Dispatch may create one from
/// the loop thread at any time. Other threads, and other hosts' loops in the same process, are never affected.
public final class PIDNamespace: Sendable {
    /// `/proc/INIT/ns/pid`, kept open for `setns` (it also keeps the namespace's identity, not its processes).
    let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { Glibc.close(descriptor) }

    /// This process's own (active) PID namespace, to return the thread to after a spawn; -1 if it cannot be opened.
    static let home: Int32 = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC)

    /// Places the calling thread's future children in a new PID namespace (`unshare(CLONE_NEWPID)`): the next
    /// fork from this thread is its init. Call ``returnHome()`` right after that fork.
    ///
    /// - Throws: when namespaces are not permitted (`EPERM` without CAP_SYS_ADMIN, `EINVAL`/`ENOSPC` when nested
    ///   too deep or limited by `user.max_pid_namespaces`).
    package static func enterNew() throws(SystemError) {
        guard home >= 0 else { throw SystemError(errno: ENOENT, operation: "open /proc/self/ns/pid") }
        guard switchyard_unshare_pid() == 0 else { throw SystemError.last("unshare(CLONE_NEWPID)") }
    }

    /// Puts the calling thread's future children back in this process's own PID namespace.
    package static func returnHome() throws(SystemError) {
        guard switchyard_setns_pid(home) == 0 else { throw SystemError.last("setns back to the host's PID namespace") }
    }

    /// The PID namespace process `pid` runs in (opened for ``forking(into:_:)``).
    package static func of(_ pid: Int32) throws(SystemError) -> PIDNamespace {
        let descriptor = open("/proc/\(pid)/ns/pid", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError.last("open /proc/\(pid)/ns/pid") }
        return PIDNamespace(descriptor: descriptor)
    }

    /// Runs `spawn` (a fork) with the calling thread's children placed in `namespace`, then puts the thread back.
    /// Returns `-errno` (a libuv error code on Unix) if the namespace cannot be entered.
    package static func forking(into namespace: PIDNamespace?, _ spawn: () -> Int32) -> Int32 {
        guard let namespace else { return spawn() }
        guard home >= 0 else { return -EINVAL }
        guard switchyard_setns_pid(namespace.descriptor) == 0 else { return -errno }
        let status = spawn()
        // Entering one's own active namespace is always allowed; if this ever failed, the next spawn's setns
        // would still place children correctly, and only thread creation from this thread would suffer.
        _ = switchyard_setns_pid(home)
        return status
    }
}

/// Process-wide containment switches that need a syscall.
public enum ProcessContainment {
    /// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`): orphaned descendants of its children are
    /// reparented to it instead of to init, so it can find and end them. Returns false if the kernel refused.
    public static func becomeSubreaper() -> Bool { switchyard_set_child_subreaper() == 0 }
}
