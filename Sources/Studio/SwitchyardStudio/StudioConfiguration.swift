/// How a studio runs: which host it shows, where it listens, and what it lets a page do.
public struct StudioConfiguration: Sendable {
    /// The host's control socket (`switchyard run`'s, by `--app` or `--socket`).
    public var socketPath: String
    /// The TCP port on 127.0.0.1 (0: a free one, chosen by the kernel).
    public var port: Int
    /// Show the fault buttons and relay `plugin/signal` and `plugin/restart` (the host must take them too).
    public var allowFaults: Bool
    /// The secret every request's path starts with (`/TOKEN/...`); random unless a caller sets one.
    public var token: String
    /// The page's files (nil: the copy in the target's resources, beside the executable).
    public var pageDirectory: String?
    /// How many bytes of the host's lines may wait for one browser before the studio stops reading for it: the host's
    /// own bounded queue then fills, and the host drops that client (Protocol/README.md §15), never waiting for it.
    public var maxPendingBytes: Int

    /// A studio for the host at `socketPath`; by default on a free port, faults off, a fresh random token.
    public init(
        socketPath: String, port: Int = 0, allowFaults: Bool = false, token: String = StudioToken.random(),
        pageDirectory: String? = nil, maxPendingBytes: Int = 1 << 20
    ) {
        self.socketPath = socketPath
        self.port = port
        self.allowFaults = allowFaults
        self.token = token
        self.pageDirectory = pageDirectory
        self.maxPendingBytes = maxPendingBytes
    }
}

/// The studio's secret: what keeps another local user, or a web page in the same browser, out (as Jupyter's token).
public enum StudioToken {
    /// 128 random bits as 32 hex digits, from the system's generator (`getrandom`).
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<32).map { _ in digits[Int(generator.next() % 16)] })
    }

    /// Compares without stopping at the first difference, so the time taken does not tell how much of a guess was
    /// right.
    static func matches(_ candidate: Substring, _ token: String) -> Bool {
        let left = Array(candidate.utf8)
        let right = Array(token.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
