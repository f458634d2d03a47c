import CLibUV
import Glibc

/// Process-wide settings every host needs once, before its first spawn.
enum ProcessSetup {
    private static let done: Void = {
        // A write to a plugin that just exited must fail with EPIPE, not kill the host (libuv does not use
        // MSG_NOSIGNAL for pipes); sourcekit-lsp's DisableSigpipe does the same.
        signal(SIGPIPE, SIG_IGN)
        uv_disable_stdio_inheritance()
    }()

    static func once() { _ = done }

    private static let pipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Only the SIGPIPE part, for a process that starts helpers without a loop (`ChildProcess`): a write to a child
    /// that just exited must fail with EPIPE, not kill the caller.
    static func ignoreBrokenPipes() { _ = pipes }
}
