// termios reaches Swift through the shim (<termios.h> is not in the Glibc module), so its members need that import.
import CSwitchyardSystem
import Glibc
import Synchronization

/// A terminal in raw mode, for the interactive prompt's line editing (arrow keys, history).
public final class Terminal {
    private let fd: Int32
    private var original = termios()
    private var raw = false
    /// The settings to restore if the process ends while a terminal is raw.
    private static let saved = Mutex<termios?>(nil)

    /// Restores a terminal left in raw mode (call before exiting from anywhere).
    public static func restoreAll() {
        guard var settings = saved.withLock({ $0 }) else { return }
        _ = tcsetattr(0, TCSANOW, &settings)
    }

    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Puts `fd` in raw mode (no echo, byte at a time); nil if it is not a terminal.
    public init?(fd: Int32 = 0) {
        self.fd = fd
        guard isatty(fd) == 1, tcgetattr(fd, &original) == 0 else { return nil }
        Self.saved.withLock { $0 = original }
        var settings = original
        // No ISIG: Ctrl-C reaches the editor as a byte (it ends the prompt), so the terminal is always restored.
        settings.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        settings.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &settings.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSANOW, &settings) == 0 else { return nil }
        raw = true
    }

    deinit { restore() }

    /// Back to the settings the terminal had.
    public func restore() {
        guard raw else { return }
        raw = false
        _ = tcsetattr(fd, TCSANOW, &original)
    }

    /// One byte of input, or nil at end of input.
    public func readByte() -> UInt8? {
        var byte: UInt8 = 0
        return retryingEINTR { Glibc.read(fd, &byte, 1) } == 1 ? byte : nil
    }
}
