public import SwitchyardSystem

extension PIDNamespace {
    /// Spawns `options` as PID 1 of a new PID namespace (`unshare(CLONE_NEWPID)` on the calling thread, the fork,
    /// then back to this process's namespace).
    ///
    /// - Throws: when namespaces are not permitted (`EPERM` without CAP_SYS_ADMIN, `EINVAL`/`ENOSPC` when nested
    ///   too deep or limited by `user.max_pid_namespaces`), or the spawn fails.
    public static func spawnInit(
        loop: UVLoop, options: UVSpawnOptions, onExit: @escaping (TerminationStatus) -> Void
    ) throws(UVError) -> (process: UVProcess, namespace: PIDNamespace) {
        do { try enterNew() } catch { throw UVError(error) }
        let process: UVProcess
        do throws(UVError) {
            process = try UVProcess.spawn(loop: loop, options: options, onExit: onExit)
        } catch {
            try? returnHome()
            throw error
        }
        do throws(SystemError) {
            try returnHome()
            return (process, try PIDNamespace.of(process.pid))
        } catch {
            process.close()
            throw UVError(error)
        }
    }
}
