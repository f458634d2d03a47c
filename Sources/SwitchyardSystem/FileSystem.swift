import Glibc
import Synchronization

/// Synchronous file operations the host needs outside the loop's I/O path (manifest, state file).
public enum FileSystem {
    /// Reads a whole regular file of at most `maxBytes` (see ``readRegularFile(_:maxBytes:)``, whose typed error
    /// says what was wrong; this variant folds it into a ``SystemError`` for callers that only report it).
    public static func readFile(_ path: String, maxBytes: Int = defaultReadLimit) throws(SystemError) -> [UInt8] {
        do { return try readRegularFile(path, maxBytes: maxBytes) } catch {
            switch error.problem {
            case .system(let cause): throw SystemError(errno: cause.errno, operation: "\(cause.operation) \(path)")
            case .notRegular: throw SystemError(errno: EINVAL, operation: error.description)
            case .tooLarge: throw SystemError(errno: EFBIG, operation: error.description)
            }
        }
    }

    /// Replaces `path` atomically: write a temporary file beside it, fsync it, rename it over `path`, fsync the
    /// directory. A crash at any point leaves either the old or the new content, never a torn file.
    public static func writeFileAtomically(_ path: String, _ bytes: [UInt8], mode: UInt32 = 0o600) throws(SystemError) {
        let temporary = "\(path).tmp-\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        if fd < 0 { throw SystemError(errno: errno, operation: "open \(temporary)") }
        let failure = writeFully(bytes) { Glibc.write(fd, $0, $1) }
        if failure != 0 {
            Glibc.close(fd)
            unlink(temporary)
            throw SystemError(errno: failure, operation: "write \(temporary)")
        }
        if fsync(fd) != 0 {
            let error = SystemError(errno: errno, operation: "fsync \(temporary)")
            Glibc.close(fd)
            unlink(temporary)
            throw error
        }
        Glibc.close(fd)
        if Glibc.rename(temporary, path) != 0 {
            let error = SystemError(errno: errno, operation: "rename \(temporary)")
            unlink(temporary)
            throw error
        }
        let directory = parentDirectory(of: path)
        let directoryFD = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            Glibc.close(directoryFD)
        }
    }

    private static let temporaryCounter = Atomic<Int>(0)

    /// Creates `path` with `bytes`, failing with `EEXIST` (``SystemError/alreadyExists``) if anything is there already,
    /// even a file that appeared after the caller looked: the check and the creation are one `open(O_EXCL)`, so a
    /// generator never overwrites a user's file. A failed write removes the partial file.
    public static func createFile(_ path: String, _ bytes: [UInt8], mode: UInt32 = 0o644) throws(SystemError) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if fd < 0 { throw SystemError(errno: errno, operation: "create \(path)") }
        let failure = writeFully(bytes) { Glibc.write(fd, $0, $1) }
        Glibc.close(fd)
        if failure != 0 {
            unlink(path)
            throw SystemError(errno: failure, operation: "write \(path)")
        }
    }

    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
    public static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// File permission bits (e.g. `0o600`), or nil if the path does not exist.
    public static func permissions(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    /// When the file was last modified, in nanoseconds since the epoch, or nil if the path does not exist.
    public static func modificationTime(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    /// Sets the file's access and modification times to now, as `touch` does, or to `secondsSinceEpoch`.
    public static func touch(_ path: String, secondsSinceEpoch: Int? = nil) throws(SystemError) {
        let status: Int32
        if let secondsSinceEpoch {
            let time = timespec(tv_sec: secondsSinceEpoch, tv_nsec: 0)
            status = withUnsafePointer(to: (time, time)) {
                $0.withMemoryRebound(to: timespec.self, capacity: 2) { utimensat(AT_FDCWD, path, $0, 0) }
            }
        } else {
            status = utimensat(AT_FDCWD, path, nil, 0)
        }
        if status != 0 { throw SystemError(errno: errno, operation: "utimensat \(path)") }
    }

    public static func setPermissions(_ path: String, _ mode: UInt32) throws(SystemError) {
        if chmod(path, mode) != 0 { throw SystemError(errno: errno, operation: "chmod \(path)") }
    }

    /// Creates a directory (and missing parents) with `mode`.
    public static func makeDirectory(_ path: String, mode: UInt32 = 0o700) throws(SystemError) {
        if isDirectory(path) { return }
        let parent = parentDirectory(of: path)
        if parent != path && !parent.isEmpty && parent != "." && !isDirectory(parent) {
            try makeDirectory(parent, mode: mode)
        }
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw SystemError(errno: errno, operation: "mkdir \(path)")
        }
    }

    @discardableResult
    public static func remove(_ path: String) -> Bool { unlink(path) == 0 }
    /// Writes `text` to an existing file in one `write` (no create, no rename): for kernel control files such as
    /// `cgroup.procs`, where each write is one command.
    public static func writeExisting(_ path: String, _ text: String) throws(SystemError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(errno: errno, operation: "open \(path)") }
        defer { Glibc.close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw SystemError(errno: errno, operation: "write \(path)") }
    }

    /// A new folder of this user's alone (`mkdtemp(3)`) under `$TMPDIR` (default `/tmp`), named `PREFIX.XXXXXX`.
    public static func makeTemporaryDirectory(prefix: String) throws(SystemError) -> String {
        let base = SystemProcess.environmentValue("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkdtemp($0) } ?? nil
        }
        guard made != nil else { throw SystemError(errno: errno, operation: "mkdtemp \(base)/\(prefix)") }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes a folder with the files in it (one level: a folder this process made for files of its own).
    @discardableResult
    public static func removeTree(_ path: String) -> Bool {
        for name in listDirectory(path) { _ = remove("\(path)/\(name)") }
        return removeDirectory(path)
    }

    /// Removes an empty directory. Returns false if it failed.
    @discardableResult
    public static func removeDirectory(_ path: String) -> Bool { rmdir(path) == 0 }

    /// Seconds since the epoch (wall clock, for file names and reports).
    public static var secondsSinceEpoch: Int { Int(Glibc.time(nil)) }

    /// Milliseconds since the epoch (wall clock, for log timestamps).
    public static var millisecondsSinceEpoch: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Checks that `path` can be written the way ``writeFileAtomically(_:_:mode:)`` writes it: by creating a file
    /// in its folder and renaming it over the path. Creates a probe file there and removes it; throws the error
    /// the real write would meet (`ENOENT`: no such folder, `EACCES`/`EROFS`: not writable, `EISDIR`: the path is a
    /// folder), so a program can refuse at start instead of failing at its first write.
    public static func checkReplaceable(_ path: String) throws(SystemError) {
        if isDirectory(path) { throw SystemError(errno: EISDIR, operation: "write \(path)") }
        let probe = "\(path).probe-\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
        let fd = Glibc.open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { throw SystemError(errno: errno, operation: "create a file in \(parentDirectory(of: path))") }
        Glibc.close(fd)
        unlink(probe)
    }

    /// The names in a directory (not `.` and `..`), sorted; empty if it cannot be read.
    public static func listDirectory(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public static func move(_ source: String, to destination: String) throws(SystemError) {
        if Glibc.rename(source, destination) != 0 { throw SystemError(errno: errno, operation: "rename \(source)") }
    }

    public static var currentDirectory: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The canonical absolute path (`realpath`), or nil if it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Looks `name` up in a `PATH` value, like `execvp` would.
    public static func findExecutable(_ name: String, path: String?) -> String? {
        if name.contains("/") { return isExecutable(name) ? name : nil }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if isExecutable(candidate) { return candidate }
        }
        return nil
    }
}
