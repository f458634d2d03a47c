import DequeModule
import Glibc
import SwitchyardProtocol
import SwitchyardUV

/// The faults a fault experiment has put on one plugin's pipes (`plugin/toxics`), shared by every transport its
/// supervisor starts: they outlast restarts until replaced.
///
/// - Important: Loop thread only.
final class PipeFaults {
    private(set) var toxics: [Toxic] = []
    private(set) var startDelayMs: Int?
    /// Kill the plugin when its first `restore` create is sent to it (then cleared: once).
    var crashOnRestore = false
    private(set) var seed: UInt64 = 1
    /// Bumped at every change, so a transport rebuilds its pipes (and their generators) once.
    private(set) var generation = 0

    /// The transport carrying the plugin now: told at once, so a heal releases what it holds.
    weak var current: ToxicTransport?

    func set(_ params: PluginToxicsRequest.Params) {
        toxics = params.toxics
        limitSpent.removeAll()
        startDelayMs = params.startDelayMs
        crashOnRestore = params.crashOnRestore ?? false
        seed = params.seed ?? seed
        generation += 1
        current?.faultsChanged()
    }

    /// Directions whose `limitData` has ended a stream: it ends one stream, so the plugin's next start passes.
    private var limitSpent = Set<Toxic.Direction>()

    func toxics(_ direction: Toxic.Direction) -> [Toxic] {
        toxics.filter { $0.direction == direction && !($0.kind == .limitData && limitSpent.contains(direction)) }
    }

    /// A `limitData` toxic ended `direction`'s stream.
    func spendLimit(_ direction: Toxic.Direction) { limitSpent.insert(direction) }
}

/// A relay the host interposes between itself and a plugin (the plugin's binary is unchanged): it carries another
/// transport and applies its plugin's ``PipeFaults`` to the bytes each way, per line, on the loop's timers.
///
/// Without faults it passes bytes straight through (a branch per chunk). With them, what one direction delays holds
/// back what follows it, and the ends of the streams come after what they follow: the session sees the plugin as if
/// the pipes themselves misbehaved.
///
/// - Important: Loop thread only.
final class ToxicTransport: PluginTransport, PluginTransportSink {
    private let inner: any PluginTransport
    private let loop: UVLoop
    private let faults: PipeFaults
    private weak var sink: (any PluginTransportSink)?
    private var generation = -1
    private var startedAt: UInt64 = 0
    private var fromPlugin = Direction()
    private var toPlugin = Direction()
    /// The relay ended the plugin's input (`limitData` towards it): nothing more is written.
    private var inputEnded = false
    /// The relay ended the plugin's output: the real end of file that follows is not delivered again.
    private var outputEndDelivered = false
    private var closed = false

    /// One direction: its pipe and what it holds until due.
    private struct Direction {
        var pipe = ToxicPipe(toxics: [], seed: 0)
        var held = Deque<ToxicPipe.Delivery>()
        var heldBytes = 0
        var timer: UVTimer?
    }

    init(inner: any PluginTransport, loop: UVLoop, faults: PipeFaults) {
        self.inner = inner
        self.loop = loop
        self.faults = faults
    }

    /// Rebuilds the pipes when the faults changed (what they hold is kept, and still delivered in order).
    private func refresh() {
        guard generation != faults.generation else { return }
        generation = faults.generation
        // New deliveries never overtake what is held.
        let hold = faults.startDelayMs.map { startedAt + UInt64($0) } ?? 0
        fromPlugin.pipe = ToxicPipe(
            toxics: faults.toxics(.fromPlugin), seed: faults.seed &* 2 &+ UInt64(generation),
            holdUntil: max(hold, fromPlugin.held.last?.due ?? 0))
        toPlugin.pipe = ToxicPipe(
            toxics: faults.toxics(.toPlugin), seed: faults.seed &* 2 &+ 1 &+ UInt64(generation),
            holdUntil: toPlugin.held.last?.due ?? 0)
    }

    /// The faults changed: a direction left without any delivers what it holds now (a heal lets everything through,
    /// as removing a toxic flushes Toxiproxy's buffer).
    func faultsChanged() {
        refresh()
        let now = loop.now
        let released = faults.startDelayMs == nil
        if released && !fromPlugin.pipe.isActive {
            fromPlugin.held = Deque(fromPlugin.held.map(Self.retimed(now)))
        }
        if !toPlugin.pipe.isActive { toPlugin.held = Deque(toPlugin.held.map(Self.retimed(now))) }
        deliver(toPlugin: false, upTo: now)
        deliver(toPlugin: true, upTo: now)
    }

    private static func retimed(_ now: UInt64) -> (ToxicPipe.Delivery) -> ToxicPipe.Delivery {
        { delivery in
            switch delivery {
            case .bytes(let bytes, let at): .bytes(bytes, at: min(at, now))
            case .end(let at): .end(at: min(at, now))
            }
        }
    }

    // MARK: - PluginTransport

    func start(_ sink: any PluginTransportSink) throws(UVError) {
        self.sink = sink
        faults.current = self
        startedAt = loop.now
        generation = -1
        refresh()
        try inner.start(self)
    }

    var pid: Int32 { inner.pid }
    var canWrite: Bool { !inputEnded && inner.canWrite }
    var queuedBytes: Int { inner.queuedBytes + toPlugin.heldBytes }

    func write(_ bytes: [UInt8]) throws(UVError) {
        guard !inputEnded else { throw UVError.closed("uv_write") }
        if faults.crashOnRestore, bytes.contains(subsequence: Self.restoreMarker) {
            faults.crashOnRestore = false
            // The request leaves, and the plugin dies while it takes it: a crash while restoring.
            try inner.write(bytes)
            inner.signal(SIGKILL)
            return
        }
        refresh()
        if !toPlugin.pipe.isActive, toPlugin.held.isEmpty, toPlugin.pipe.lastDue <= loop.now {
            try inner.write(bytes)
            return
        }
        enqueue(toPlugin.pipe.feed(bytes, now: loop.now), toPlugin: true)
    }

    private static let restoreMarker = Array(#""reason":"restore""#.utf8)

    func cork() { inner.cork() }
    func uncork() { inner.uncork() }

    func closeInput() {
        // After what is held: the plugin reads everything it was sent, then end of file.
        guard toPlugin.held.isEmpty else {
            toPlugin.held.append(.end(at: toPlugin.pipe.lastDue))
            return
        }
        inputEnded = true
        inner.closeInput()
    }

    func signal(_ number: Int32) { inner.signal(number) }
    func killStragglers() { inner.killStragglers() }
    func discardErrors() { inner.discardErrors() }
    func keepErrors() { inner.keepErrors() }
    var discardedErrorBytes: Int { inner.discardedErrorBytes }
    func readPendingErrors() { inner.readPendingErrors() }

    func close() {
        closed = true
        for timer in [fromPlugin.timer, toPlugin.timer] { timer?.close() }
        fromPlugin = Direction()
        toPlugin = Direction()
        inner.close()
    }

    // MARK: - PluginTransportSink (what the carried transport delivers)

    func outputReceived(_ bytes: [UInt8]) {
        guard !outputEndDelivered else { return }
        refresh()
        if !fromPlugin.pipe.isActive, fromPlugin.held.isEmpty, fromPlugin.pipe.lastDue <= loop.now {
            sink?.outputReceived(bytes)
            return
        }
        enqueue(fromPlugin.pipe.feed(bytes, now: loop.now), toPlugin: false)
    }

    func outputEnded() {
        guard !outputEndDelivered else { return }
        let rest = fromPlugin.pipe.flush(now: loop.now)
        enqueue(rest + [.end(at: max(loop.now, fromPlugin.pipe.lastDue))], toPlugin: false)
    }

    func errorsReceived(_ bytes: [UInt8]) { sink?.errorsReceived(bytes) }
    func errorsEnded() { sink?.errorsEnded() }
    func exited(_ status: TerminationStatus) {
        sink?.exited(status)
        // A blackhole or a long delay must not keep a dead plugin's session open: what is held is delivered now.
        deliver(toPlugin: false, upTo: .max)
    }

    // MARK: - Delivery on the loop's timers

    private func enqueue(_ deliveries: [ToxicPipe.Delivery], toPlugin direction: Bool) {
        for delivery in deliveries {
            if case .bytes(let bytes, _) = delivery, direction { toPlugin.heldBytes += bytes.count }
            if direction { toPlugin.held.append(delivery) } else { fromPlugin.held.append(delivery) }
        }
        deliver(toPlugin: direction, upTo: loop.now)
    }

    /// Delivers what is due by `now` in one direction, and arms its timer for the next.
    private func deliver(toPlugin direction: Bool, upTo now: UInt64) {
        while !closed, let next = direction ? toPlugin.held.first : fromPlugin.held.first, next.due <= now {
            if direction {
                toPlugin.held.removeFirst()
                if case .bytes(let bytes, _) = next { toPlugin.heldBytes -= bytes.count }
                switch next {
                case .bytes(let bytes, _): try? inner.write(bytes)
                case .end:
                    if toPlugin.pipe.ended { faults.spendLimit(.toPlugin) }
                    inputEnded = true
                    inner.closeInput()
                    toPlugin.held.removeAll()
                    toPlugin.heldBytes = 0
                }
            } else {
                fromPlugin.held.removeFirst()
                switch next {
                case .bytes(let bytes, _): sink?.outputReceived(bytes)
                case .end:
                    if fromPlugin.pipe.ended { faults.spendLimit(.fromPlugin) }
                    outputEndDelivered = true
                    fromPlugin.held.removeAll()
                    sink?.outputEnded()
                }
            }
        }
        arm(toPlugin: direction)
    }

    private func arm(toPlugin direction: Bool) {
        guard !closed, let next = direction ? toPlugin.held.first : fromPlugin.held.first else { return }
        var timer = direction ? toPlugin.timer : fromPlugin.timer
        if timer == nil {
            timer = try? UVTimer(loop: loop)
            if direction { toPlugin.timer = timer } else { fromPlugin.timer = timer }
        }
        let now = loop.now
        try? timer?.start(after: next.due > now ? next.due - now : 0) { [weak self] in
            guard let self else { return }
            self.deliver(toPlugin: direction, upTo: self.loop.now)
        }
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    fileprivate func contains(subsequence needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= count else { return false }
        var index = startIndex
        while let found = self[index...].firstIndex(of: first) {
            if found + needle.count > endIndex { return false }
            if self[found..<(found + needle.count)].elementsEqual(needle) { return true }
            index = found + 1
        }
        return false
    }
}
