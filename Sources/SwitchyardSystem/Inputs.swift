import Glibc

// Paths are inputs too: a file the host reads and a folder it listens in can be anything another user or a typo
// made of them. The checks here are on the descriptor (fstat after open, O_NOFOLLOW), not on the path before opening
// it, so nothing can be swapped between the check and the use.

/// Why a file could not be read as a bounded regular file.
public struct FileReadError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What was wrong with the file.
    public enum Problem: Sendable, Equatable {
        /// It is a FIFO, a device, a folder or a socket: reading it could block forever or never end.
        case notRegular(kind: String)
        /// It holds more than the bound allows.
        case tooLarge(limit: Int)
        /// The system refused (`ENOENT`, `EACCES`...).
        case system(SystemError)
    }

    public let path: String
    public let problem: Problem

    public var description: String {
        switch problem {
        case .notRegular(let kind): "\(path) is \(kind), not a regular file"
        case .tooLarge(let limit): "\(path) is larger than the \(FileSystem.describeSize(limit)) limit"
        case .system(let error): "cannot read \(path): \(error)"
        }
    }

    /// Whether the file simply is not there (the one case callers treat as "no file" rather than a bad one).
    public var isNotFound: Bool {
        if case .system(let error) = problem { return error.isNotFound }
        return false
    }
}

/// Why a control socket's folder, or a socket file already in it, cannot be trusted.
public struct SocketPathError: Error, CustomStringConvertible, Sendable, Equatable {
    public let path: String
    public let problem: String
    public var description: String { "\(path) \(problem)" }
}

extension FileSystem {
    /// The bound ``readFile(_:)`` applies when the caller names none: large enough for any state file, small enough
    /// that a runaway file cannot take the host's memory.
    public static let defaultReadLimit = 64 << 20

    /// Reads a whole regular file of at most `maxBytes` bytes.
    ///
    /// The file is opened with `O_NONBLOCK` (a FIFO cannot stall the open) and checked with `fstat` on the opened
    /// descriptor: anything but a regular file (a FIFO, `/dev/zero` behind a symlink, a folder) is refused before a
    /// byte is read. At most `maxBytes + 1` bytes are read, so a file that grows while being read is refused too.
    public static func readRegularFile(
        _ path: String, maxBytes: Int = defaultReadLimit
    ) throws(FileReadError) -> [UInt8] {
        let (fd, info) = try openRegular(path)
        defer { Glibc.close(fd) }
        // /proc files report size 0, so st_size is only a first refusal; the read loop enforces the bound.
        if Int(info.st_size) > maxBytes { throw FileReadError(path: path, problem: .tooLarge(limit: maxBytes)) }
        var result: [UInt8] = []
        result.reserveCapacity(min(Int(info.st_size), maxBytes) + 1)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let wanted = min(chunk.count, maxBytes + 1 - result.count)
            let count = retryingEINTR { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) } }
            if count < 0 {
                throw FileReadError(path: path, problem: .system(SystemError(errno: errno, operation: "read")))
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
            if result.count > maxBytes { throw FileReadError(path: path, problem: .tooLarge(limit: maxBytes)) }
        }
        return result
    }

    /// Opens `path` for reading without blocking on a FIFO, and refuses anything but a regular file before a byte is
    /// read. The caller closes the descriptor.
    private static func openRegular(_ path: String) throws(FileReadError) -> (Int32, stat) {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        if fd < 0 { throw FileReadError(path: path, problem: .system(SystemError(errno: errno, operation: "open"))) }
        var info = stat()
        if fstat(fd, &info) != 0 {
            let error = SystemError(errno: errno, operation: "fstat")
            Glibc.close(fd)
            throw FileReadError(path: path, problem: .system(error))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(fd)
            throw FileReadError(path: path, problem: .notRegular(kind: describeKind(info.st_mode)))
        }
        return (fd, info)
    }

    /// The first `count` bytes of a regular file (fewer if it is shorter): enough to look at a script's `#!` line
    /// without reading a large binary. Opened as ``readRegularFile(_:maxBytes:)`` opens, so a FIFO cannot stall it.
    public static func readPrefix(_ path: String, count: Int) throws(FileReadError) -> [UInt8] {
        let (fd, _) = try openRegular(path)
        defer { Glibc.close(fd) }
        var result = [UInt8](repeating: 0, count: count)
        let read = retryingEINTR { result.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, count) } }
        if read < 0 { throw FileReadError(path: path, problem: .system(SystemError(errno: errno, operation: "read"))) }
        return Array(result[0..<read])
    }

    /// "64 MiB", "512 KiB", "100 bytes".
    public static func describeSize(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    static func describeKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }

    static func describeOwner(_ uid: uid_t) -> String {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwuid_r(uid, &entry, &buffer, buffer.count, &found)
        guard status == 0, found != nil, let name = entry.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }

    /// Makes sure `directory` is a folder only this process's user can write in, creating it (mode 0700) if missing.
    ///
    /// Refused: a symbolic link (never followed), something that is not a folder, a folder owned by another uid, a
    /// folder group or others may write in (they could replace the socket). The check is `fstat` on the folder opened
    /// with `O_DIRECTORY | O_NOFOLLOW`, so it is about the very folder at that path, not one swapped in later. Missing
    /// parents are created with 0700 as before; only the socket's own folder must be private.
    public static func prepareSocketDirectory(_ directory: String) throws(SocketPathError) {
        let parent = parentDirectory(of: directory)
        if parent != directory && !parent.isEmpty && parent != "." && !isDirectory(parent) {
            do { try makeDirectory(parent, mode: 0o700) } catch {
                throw SocketPathError(path: parent, problem: "cannot be created: \(error)")
            }
        }
        // mkdir with the final mode, never mkdir-then-chmod: there is no moment at which the folder is open to others.
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw SocketPathError(
                path: directory, problem: "cannot be created: \(SystemError(errno: errno, operation: "mkdir"))")
        }
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            let failure = errno
            var info = stat()
            if lstat(directory, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK {
                throw SocketPathError(
                    path: directory,
                    problem:
                        "is a symbolic link; the control socket's folder must be a real folder (refusing to follow it)")
            }
            if failure == ENOTDIR || failure == ELOOP {
                throw SocketPathError(path: directory, problem: "is \(describeKind(info.st_mode)), not a folder")
            }
            throw SocketPathError(
                path: directory, problem: "cannot be opened: \(SystemError(errno: failure, operation: "open"))")
        }
        defer { Glibc.close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 {
            throw SocketPathError(
                path: directory, problem: "cannot be checked: \(SystemError(errno: errno, operation: "fstat"))")
        }
        let mode = "0" + String(info.st_mode & 0o7777, radix: 8)
        guard info.st_uid == geteuid() else {
            throw SocketPathError(
                path: directory,
                problem:
                    "is owned by \(describeOwner(info.st_uid)), not by this user (\(describeOwner(geteuid()))), mode \(mode): its owner could replace the control socket; remove it or choose another --socket"
            )
        }
        guard info.st_mode & 0o022 == 0 else {
            throw SocketPathError(
                path: directory,
                problem:
                    "has mode \(mode) (owner \(describeOwner(info.st_uid))): group or others may write in it and replace the control socket; chmod 700 it or choose another --socket"
            )
        }
    }

    /// What is at a control socket's path before the host binds it.
    public enum SocketPathState: Sendable, Equatable {
        /// Nothing.
        case absent
        /// A socket of this user: a live host's, or a stale one a killed host left.
        case ownSocket
    }

    /// Looks at `path` without following a symlink. Anything but nothing or a socket of this user is refused, and
    /// never removed: a file that is not a socket is not the host's to delete, and another user's socket may be
    /// their live host (or bait).
    public static func inspectSocketPath(_ path: String) throws(SocketPathError) -> SocketPathState {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return .absent }
            throw SocketPathError(
                path: path, problem: "cannot be checked: \(SystemError(errno: errno, operation: "lstat"))")
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketPathError(
                path: path, problem: "is \(describeKind(info.st_mode)), not a socket; not removing it")
        }
        guard info.st_uid == geteuid() else {
            throw SocketPathError(
                path: path,
                problem:
                    "is a socket of \(describeOwner(info.st_uid)), not of this user (\(describeOwner(geteuid()))); not removing another user's socket"
            )
        }
        return .ownSocket
    }
}
