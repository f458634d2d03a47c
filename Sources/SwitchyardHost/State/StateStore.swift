import Logging
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV
import Synchronization

/// What a state file holds: the tree, and the id counters so ids are never reused across host runs.
struct StateFile: Codable, Sendable {
    static let formatName = "switchyard-state"
    var format: String
    var version: Int
    var app: String?
    var nextInstanceID: Int64
    var nextEntryID: Int64
    var tree: TreeSnapshot
}

/// `--state FILE`: the tree written after changes (debounced, atomically, off the loop thread) and read back at
/// start.
///
/// Every write goes to a fresh temporary file, is fsynced, renamed over the state file, and the folder is fsynced:
/// a crash or a `SIGKILL` at any moment leaves the old tree or the new one, never a mix. Trees are encoded and written
/// on a task of their own, so neither the encoding (milliseconds for a large tree) nor an fsync stalls the loop: the
/// loop hands over the tree, a value whose snapshot costs nothing. A burst of changes is coalesced into the newest
/// tree, and a generation number under a lock keeps an older tree from ever replacing a newer one.
///
/// - Important: ``treeChanged(_:)`` and ``flush(_:)`` on the loop thread only.
final class StateStore {
    let path: String
    private let app: String?
    private let logger: Logger
    private let debounceMs: UInt64
    private let loop: UVLoop
    private var timer: UVTimer?
    private var pending: NavigationTree?
    private var generation: UInt64 = 0
    private let writer: Writer

    /// The file on disk, shared with the writer task: serialises renames and remembers the newest generation written.
    final class Disk: Sendable {
        let path: String
        private let logger: Logger
        private let written = Mutex<UInt64>(0)
        private let health = Mutex(Health())

        /// Whether the newest trees reach the disk: `host/status` says so, because an app whose state file cannot
        /// be written (a full disk, a file-size limit) goes on serving, and would otherwise lose a crash's tree
        /// without a word.
        struct Health: Sendable {
            var writtenRevision: UInt64?
            var failures = 0
            var error: String?
        }

        init(path: String, logger: Logger) {
            self.path = path
            self.logger = logger
        }

        var status: Health { health.withLock { $0 } }

        /// Writes unless a newer generation is already on disk.
        func write(generation: UInt64, revision: UInt64, bytes: [UInt8]) {
            written.withLock { newest in
                guard generation > newest else { return }
                do {
                    try FileSystem.writeFileAtomically(path, bytes)
                    newest = generation
                    let failed = health.withLock { health in
                        defer { health = Health(writtenRevision: revision) }
                        return health.failures
                    }
                    if failed > 0 {
                        logger.notice(
                            "the state file \(path) is written again (revision \(revision)) after \(failed) failed writes"
                        )
                    }
                } catch {
                    let count = health.withLock { health in
                        health.failures += 1
                        health.error = "\(error)"
                        return health.failures
                    }
                    // Said once, then every 100th time: a full disk fails every write until it is freed.
                    if count == 1 || count % 100 == 0 {
                        logger.error(
                            "cannot write the state file \(path): \(error) (\(count) failures); the app goes on serving, and the file keeps revision \(status.writtenRevision.map(String.init) ?? "none") until a write succeeds"
                        )
                    }
                }
            }
        }
    }

    /// The task that encodes and writes off the loop thread; its stream keeps only the newest tree not yet written.
    final class Writer {
        let disk: Disk
        let continuation: AsyncStream<(UInt64, NavigationTree)>.Continuation
        private let task: Task<Void, Never>

        init(disk: Disk, app: String?) {
            self.disk = disk
            let (stream, continuation) = AsyncStream<(UInt64, NavigationTree)>.makeStream(
                bufferingPolicy: .bufferingNewest(1))
            self.continuation = continuation
            task = Task.detached {
                for await (generation, tree) in stream {
                    disk.write(
                        generation: generation, revision: tree.revision, bytes: StateStore.encode(tree, app: app))
                }
            }
        }

        func stop() {
            continuation.finish()
        }
    }

    init(path: String, app: String?, loop: UVLoop, logger: Logger, debounceMs: UInt64 = 20) {
        self.path = path
        self.app = app
        self.loop = loop
        self.logger = logger
        self.debounceMs = debounceMs
        self.writer = Writer(disk: Disk(path: path, logger: logger), app: app)
    }

    // MARK: - Loading

    enum Loaded {
        case none
        case tree(NavigationTree)
        /// The file could not be used; it was moved aside.
        case setAside(reason: String, movedTo: String?)
    }

    /// The largest state file read (Protocol/README.md §17): far above any real tree, far below what would hurt.
    static let maxBytes = FileSystem.defaultReadLimit

    /// Reads the state file. A torn, corrupt or foreign file, or one that is not a regular file of at most
    /// ``maxBytes``, is reported and moved aside (`FILE.corrupt-TIME`), never fatal: the app then starts fresh.
    func load() -> Loaded {
        removeStaleTemporaries()
        let reason: String
        do {
            let bytes: [UInt8]
            do { bytes = try FileSystem.readRegularFile(path, maxBytes: Self.maxBytes) } catch {
                // A dangling symlink is "no file" too: the first write replaces the link.
                if error.isNotFound { return .none }
                // A FIFO, a device, a folder or an oversized file is set aside like a corrupt one: it is not a tree
                // this host wrote, and reading on would block or never end.
                return setAside(error.description)
            }
            let file = try Coding.decode(StateFile.self, from: try JSONParser.parse(bytes))
            guard file.format == StateFile.formatName, file.version == 1 else {
                throw ResponseError(
                    .invalidParams,
                    "not a version 1 switchyard state file (format '\(file.format)', version \(file.version))")
            }
            if let app, let saved = file.app, saved != app {
                throw ResponseError(.invalidParams, "it belongs to the app '\(saved)', not '\(app)'")
            }
            let tree = try NavigationTree(
                snapshot: file.tree, nextInstanceID: file.nextInstanceID, nextEntryID: file.nextEntryID)
            generation = 0
            return .tree(tree)
        } catch let error as ResponseError {
            reason = error.message
        } catch {
            reason = "\(error)"
        }
        return setAside(reason)
    }

    /// Temporary files of a host that was killed while writing (`FILE.tmp-PID-N` of a pid no longer running).
    private func removeStaleTemporaries() {
        let directory = FileSystem.parentDirectory(of: path)
        let prefix = String(path.dropFirst(directory.count + 1)) + ".tmp-"
        for name in FileSystem.listDirectory(directory) where name.hasPrefix(prefix) {
            let pid = name.dropFirst(prefix.count).split(separator: "-").first.flatMap { Int32($0) }
            if let pid, pid != SystemProcess.currentPID, !SystemProcess.isRunning(pid) {
                _ = FileSystem.remove("\(directory)/\(name)")
            }
        }
    }

    /// Moves the file out of the way, keeping it for inspection.
    func setAside(_ reason: String) -> Loaded {
        let target = "\(path).corrupt-\(FileSystem.secondsSinceEpoch)"
        do {
            try FileSystem.move(path, to: target)
            logger.error(
                "the state file \(path) cannot be used (\(reason)); moved to \(target); starting from a fresh tree")
            return .setAside(reason: reason, movedTo: target)
        } catch {
            logger.error(
                "the state file \(path) cannot be used (\(reason)) nor moved aside (\(error)); starting from a fresh tree"
            )
            return .setAside(reason: reason, movedTo: nil)
        }
    }

    // MARK: - Saving

    /// A new revision: written after `debounceMs` (a burst becomes one write).
    func treeChanged(_ tree: NavigationTree) {
        pending = tree
        guard timer == nil || timer?.isActive == false else { return }
        if timer == nil { timer = try? UVTimer(loop: loop) }
        do {
            try timer?.start(after: debounceMs) { [weak self] in self?.hand() }
        } catch {
            hand()
        }
    }

    private func hand() {
        guard let tree = pending else { return }
        pending = nil
        generation += 1
        writer.continuation.yield((generation, tree))
    }

    /// The file's bytes for `tree`: on the writer's task, or on the loop for the last write at shutdown.
    static func encode(_ tree: NavigationTree, app: String?) -> [UInt8] {
        let file = StateFile(
            format: StateFile.formatName, version: 1, app: app, nextInstanceID: tree.nextInstanceID,
            nextEntryID: tree.nextEntryID,
            tree: tree.snapshot())
        return (try? JSONValueEncoder().encodeBytes(file)) ?? []
    }

    /// Whether the newest trees reach the disk (`host/status`).
    var health: Disk.Health { writer.disk.status }

    /// Stops without writing: for an app that never started, whose (empty) tree must not replace the file.
    func discard() {
        timer?.close()
        timer = nil
        pending = nil
        writer.stop()
    }

    /// At shutdown: the newest tree, written before returning.
    func flush(_ tree: NavigationTree) {
        timer?.close()
        timer = nil
        pending = nil
        generation += 1
        writer.disk.write(generation: generation, revision: tree.revision, bytes: Self.encode(tree, app: app))
        writer.stop()
    }
}
