import SwitchyardProtocol

/// One direction of the relay between the host and a plugin, without I/O: bytes in, each line through the toxics
/// (Toxiproxy's, per line), and deliveries out, each with the time it is due.
///
/// Deliveries come out in order and their times never decrease (a delayed line holds back the lines after it, as a
/// slow link would). Choices (which lines, how long, which byte) come from a seeded generator, so a fault experiment
/// replays. Without toxics and with nothing held, bytes pass untouched and at once, unframed.
struct ToxicPipe {
    enum Delivery: Equatable {
        case bytes([UInt8], at: UInt64)
        /// The stream ends here (`limitData`); nothing follows.
        case end(at: UInt64)

        var due: UInt64 {
            switch self {
            case .bytes(_, let at), .end(let at): at
            }
        }
    }

    let toxics: [Toxic]
    private var generator: SeededGenerator
    /// The unterminated end of what came in, while toxics work on lines.
    private var partial: [UInt8] = []
    /// Bytes passed since the toxics were set (`limitData`).
    private var passed = 0
    /// When the last delivery is due: later ones never overtake it.
    private(set) var lastDue: UInt64 = 0
    /// The stream was ended by `limitData`: what comes in after is dropped.
    private(set) var ended = false

    init(toxics: [Toxic], seed: UInt64, holdUntil: UInt64 = 0) {
        self.toxics = toxics
        generator = SeededGenerator(seed: seed)
        lastDue = holdUntil
    }

    /// Whether anything would change what passes: without toxics, bytes are delivered as they came.
    var isActive: Bool { !toxics.isEmpty }

    /// Takes bytes that arrived at `now` (milliseconds); returns what to deliver, and when.
    mutating func feed(_ bytes: [UInt8], now: UInt64) -> [Delivery] {
        guard !ended else { return [] }
        guard isActive else {
            lastDue = max(lastDue, now)
            return [.bytes(bytes, at: lastDue)]
        }
        partial.append(contentsOf: bytes)
        var deliveries: [Delivery] = []
        var start = 0
        while let newline = partial[start...].firstIndex(of: 0x0A) {
            line(Array(partial[start...newline]), now: now, into: &deliveries)
            start = newline + 1
            if ended { break }
        }
        partial.removeSubrange(0..<start)
        return deliveries
    }

    /// At the end of the stream: an unterminated last line goes through as it is.
    mutating func flush(now: UInt64) -> [Delivery] {
        guard !ended, !partial.isEmpty else { return [] }
        defer { partial.removeAll() }
        var deliveries: [Delivery] = []
        line(partial, now: now, into: &deliveries)
        return deliveries
    }

    private mutating func chance(_ toxic: Toxic) -> Bool {
        let probability = toxic.probability ?? 1
        if probability >= 1 { return true }
        return Double(generator.next() % 1_000_000) < probability * 1_000_000
    }

    private mutating func random(_ range: ClosedRange<Int>) -> Int {
        guard range.upperBound > range.lowerBound else { return range.lowerBound }
        return range.lowerBound + Int(generator.next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    private mutating func line(_ input: [UInt8], now: UInt64, into deliveries: inout [Delivery]) {
        var line = input
        var copies = 1
        var delay = 0
        var transmitMs = 0
        var slicer: Toxic?
        for toxic in toxics {
            switch toxic.kind {
            case .blackhole:
                if chance(toxic) { return }
            case .limitData:
                let allowed = max(0, (toxic.bytes ?? 0) - passed)
                if line.count >= allowed {
                    let due = max(now, lastDue)
                    if allowed > 0 { deliveries.append(.bytes(Array(line.prefix(allowed)), at: due)) }
                    deliveries.append(.end(at: due))
                    lastDue = due
                    ended = true
                    return
                }
            case .corrupt:
                guard chance(toxic) else { continue }
                // Only ASCII bytes, and not the newline: with its high bit set each is invalid UTF-8 (or a stray
                // continuation byte), which the host's strict reader rejects; never another valid message.
                let positions = line.indices.filter { line[$0] < 0x80 && line[$0] != 0x0A }
                if !positions.isEmpty { line[positions[random(0...(positions.count - 1))]] |= 0x80 }
            case .duplicate:
                if chance(toxic) { copies = 2 }
            case .latency:
                guard chance(toxic) else { continue }
                let jitter = toxic.jitterMs ?? 0
                delay += max(0, (toxic.latencyMs ?? 0) + random(-jitter...jitter))
            case .bandwidth:
                transmitMs += (line.count * 1_000 + (toxic.bytesPerSecond ?? 1) - 1) / max(1, toxic.bytesPerSecond ?? 1)
            case .slicer:
                if chance(toxic) { slicer = toxic }
            }
        }
        passed += line.count
        var due = max(now + UInt64(delay), lastDue) + UInt64(transmitMs)
        for _ in 0..<copies {
            if let slicer {
                var offset = 0
                let average = max(1, slicer.averageSize ?? 1)
                let variation = min(average - 1, slicer.sizeVariation ?? 0)
                while offset < line.count {
                    let size = max(1, average + random(-variation...variation))
                    let end = min(line.count, offset + size)
                    deliveries.append(.bytes(Array(line[offset..<end]), at: due))
                    offset = end
                    if offset < line.count { due += UInt64(slicer.delayMs ?? 0) }
                }
            } else {
                deliveries.append(.bytes(line, at: due))
            }
        }
        lastDue = due
    }
}
