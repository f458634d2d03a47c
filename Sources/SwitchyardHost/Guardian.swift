import Glibc
import Logging
import SwitchyardUV

/// The host side of `switchyard-guardian` (see its `main.c`): registers plugin process groups so that they are
/// SIGKILLed if the host dies without stopping them.
final class Guardian {
    private let process: UVProcess

    private init(process: UVProcess) { self.process = process }

    /// Starts the guardian, or returns nil (with a warning) when its executable is not found: the host then relies
    /// on the plugin contract (exit on stdin EOF) alone.
    static func start(loop: UVLoop, productsDirectory: String, logger: Logger) -> Guardian? {
        let candidates = [
            "\(productsDirectory)/switchyard-guardian",
            SystemProcess.executablePath.map { "\(FileSystem.parentDirectory(of: $0))/switchyard-guardian" },
            FileSystem.findExecutable("switchyard-guardian", path: SystemProcess.environmentValue("PATH")),
        ].compactMap { $0 }
        guard let executable = candidates.first(where: FileSystem.isExecutable) else {
            logger.warning("switchyard-guardian not found; plugins rely on exiting at stdin EOF if the host dies")
            return nil
        }
        let options = UVSpawnOptions(
            executable: executable, environment: [:], newProcessGroup: true, stdin: .pipe, stdout: .ignore,
            stderr: .inherit)
        do {
            let process = try UVProcess.spawn(loop: loop, options: options) { status in
                if status != .exited(0) { logger.warning("switchyard-guardian ended: \(status)") }
            }
            // The guardian must never keep the loop (and so the host) alive.
            process.keepsLoopAlive = false
            process.stdin?.keepsLoopAlive = false
            return Guardian(process: process)
        } catch {
            logger.warning("cannot start switchyard-guardian: \(error)")
            return nil
        }
    }

    var pid: Int32 { process.pid }

    func watch(processGroup pgid: Int32) { send("+\(pgid)\n") }
    func release(processGroup pgid: Int32) { send("-\(pgid)\n") }

    private func send(_ text: String) {
        try? process.stdin?.write(Array(text.utf8))
    }

    /// Closes the guardian's stdin: it kills whatever is still registered (nothing, after a clean shutdown) and exits.
    func close() {
        guard let stdin = process.stdin, stdin.isOpen else { return }
        // Keep the loop running until the guardian has read EOF and exited, so it ends cleanly and is reaped.
        process.keepsLoopAlive = true
        stdin.keepsLoopAlive = true
        try? stdin.shutdown { _ in stdin.close() }
    }
}
