@testable import SwitchyardHost
import SwitchyardProtocol
import Testing

/// The relay's toxics as pure functions of bytes, time and a seed (no process, no loop): what each does to the
/// lines that pass, and that a seed replays them.
@Suite("Toxics on a pipe", .timeLimit(.minutes(1)))
struct ToxicPipeTests {
    private static let lines = (1...20).map { id in
        #"{"jsonrpc":"2.0","id":\#(id),"result":{"content":{"screen":{"name":"s"}}}}"# + "\n"
    }
    private static let input = Array(lines.joined().utf8)

    /// Feeds the input in chunks of 37 bytes at time `now` and returns every delivery.
    private func run(_ toxics: [Toxic], seed: UInt64 = 7, now: UInt64 = 1_000) -> [ToxicPipe.Delivery] {
        var pipe = ToxicPipe(toxics: toxics, seed: seed)
        var deliveries: [ToxicPipe.Delivery] = []
        var offset = 0
        while offset < Self.input.count {
            deliveries += pipe.feed(Array(Self.input[offset..<min(Self.input.count, offset + 37)]), now: now)
            offset += 37
        }
        return deliveries + pipe.flush(now: now)
    }

    private func bytes(_ deliveries: [ToxicPipe.Delivery]) -> [UInt8] {
        deliveries.flatMap { if case .bytes(let bytes, _) = $0 { bytes } else { [UInt8]() } }
    }

    private func dueTimesNeverDecrease(_ deliveries: [ToxicPipe.Delivery]) -> Bool {
        zip(deliveries, deliveries.dropFirst()).allSatisfy { $0.due <= $1.due }
    }

    @Test("without toxics bytes pass as they came, at once")
    func passThrough() {
        let deliveries = run([])
        #expect(bytes(deliveries) == Self.input)
        #expect(deliveries.allSatisfy { $0.due == 1_000 })
    }

    @Test("latency with jitter: every line later by latency ± jitter, in order")
    func latency() {
        let deliveries = run([Toxic(.latency, .fromPlugin, latencyMs: 50, jitterMs: 20)])
        #expect(bytes(deliveries) == Self.input)
        #expect(deliveries.allSatisfy { $0.due >= 1_030 })
        #expect(dueTimesNeverDecrease(deliveries))
    }

    @Test("bandwidth: a line leaves after its bytes at the rate")
    func bandwidth() {
        let deliveries = run([Toxic(.bandwidth, .toPlugin, bytesPerSecond: 1_000)])
        #expect(bytes(deliveries) == Self.input)
        // 20 lines of ~67 bytes at 1,000 bytes per second: the last one a little over a second later.
        #expect(deliveries.last.map { $0.due >= 1_000 + UInt64(Self.input.count) - 20 } == true)
        #expect(dueTimesNeverDecrease(deliveries))
    }

    @Test("slicer: lines in fragments, delays between them; the bytes are the same")
    func slicer() {
        let deliveries = run([Toxic(.slicer, .fromPlugin, averageSize: 5, sizeVariation: 3, delayMs: 2)])
        #expect(bytes(deliveries) == Self.input)
        #expect(deliveries.count > Self.lines.count * 5)
        #expect(deliveries.allSatisfy { if case .bytes(let bytes, _) = $0 { bytes.count <= 8 } else { false } })
        #expect(dueTimesNeverDecrease(deliveries))
        #expect(deliveries.last.map { $0.due > 1_000 } == true)
    }

    @Test("limitData: that many bytes, the end of a line cut, then the end of the stream; nothing after")
    func limitData() {
        let deliveries = run([Toxic(.limitData, .fromPlugin, bytes: 100)])
        #expect(bytes(deliveries) == Array(Self.input.prefix(100)))
        #expect(deliveries.last == .end(at: 1_000))
    }

    @Test("blackhole: nothing passes")
    func blackhole() {
        #expect(run([Toxic(.blackhole, .fromPlugin)]).isEmpty)
        let half = bytes(run([Toxic(.blackhole, .fromPlugin, probability: 0.5)]))
        #expect(!half.isEmpty && half.count < Self.input.count)
    }

    @Test("corrupt: one ASCII byte per line gets its high bit, and the strict reader rejects every such line")
    func corrupt() {
        let corrupted = bytes(run([Toxic(.corrupt, .fromPlugin)]))
        #expect(corrupted.count == Self.input.count)
        #expect(zip(corrupted, Self.input).filter { $0 != $1 }.count == Self.lines.count)
        var reader = MessageReader(maxLineLength: 1 << 20)
        reader.append(corrupted)
        var messages = 0
        var violations = 0
        while let event = reader.next() {
            if case .message = event { messages += 1 } else { violations += 1 }
        }
        #expect(messages == 0)
        #expect(violations == Self.lines.count)
    }

    @Test("duplicate: each line twice")
    func duplicate() {
        let doubled = bytes(run([Toxic(.duplicate, .fromPlugin)]))
        #expect(doubled == Array(Self.lines.map { $0 + $0 }.joined().utf8))
    }

    @Test("a seed replays the same choices; another seed makes others")
    func seeded() {
        let toxics = [
            Toxic(.latency, .fromPlugin, probability: 0.5, latencyMs: 40, jitterMs: 30),
            Toxic(.corrupt, .fromPlugin, probability: 0.3),
        ]
        #expect(run(toxics, seed: 11) == run(toxics, seed: 11))
        #expect(run(toxics, seed: 11) != run(toxics, seed: 12))
    }

    @Test("a pipe held until a start delay delivers nothing before it")
    func startDelay() {
        var pipe = ToxicPipe(toxics: [], seed: 1, holdUntil: 5_000)
        #expect(pipe.feed(Array("x\n".utf8), now: 1_000) == [.bytes(Array("x\n".utf8), at: 5_000)])
    }

    @Test("toxics are checked: each problem names its field")
    func problems() {
        #expect(Toxic(.latency, .toPlugin).problem?.field == "latencyMs")
        #expect(Toxic(.slicer, .toPlugin, averageSize: 0).problem?.field == "averageSize")
        #expect(Toxic(.blackhole, .toPlugin, probability: 2).problem?.field == "probability")
        #expect(Toxic(.limitData, .fromPlugin, bytes: -1).problem?.field == "bytes")
        #expect(Toxic(.duplicate, .fromPlugin).problem == nil)
    }
}
