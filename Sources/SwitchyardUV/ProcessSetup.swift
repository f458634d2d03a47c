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
}
