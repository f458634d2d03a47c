import CLibUV
import SwitchyardSystem

/// Process-wide settings every host needs once, before its first spawn.
enum ProcessSetup {
    private static let done: Void = {
        // A write to a plugin that just exited must fail with EPIPE, not kill the host.
        SystemProcess.ignoreBrokenPipes()
        uv_disable_stdio_inheritance()
    }()

    static func once() { _ = done }
}
