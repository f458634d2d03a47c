#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SwitchyardProtocol
import SwitchyardSystem

/// Pending output, written in one `write` per batch. Answers are written into ``pending`` in place (the request
/// fast lane writes a whole response line there), so an answer costs no array of its own.
struct Output {
    /// Where ``flush()`` writes (stdout's protocol descriptor); nil until ``PluginRuntime/run(_:)`` starts, and for an in-process peer, which takes the bytes.
    var descriptor: Int32?
    /// The bytes not written yet: whole lines, in the order they were produced.
    var pending = JSONWriter(capacity: 16 * 1024)

    mutating func append(_ bytes: [UInt8]) {
        pending.writeRawBytes(bytes)
    }

    /// Everything pending, taken out (what an in-process peer gets instead of a `write`).
    mutating func take() -> [UInt8] {
        let bytes = pending.bytes
        pending = JSONWriter(capacity: 256)
        return bytes
    }

    mutating func flush() {
        guard !pending.bytes.isEmpty else { return }
        // Not started by ``PluginRuntime/run(_:)`` yet: keep the bytes until stdout is known.
        guard let descriptor else { return }
        // A plain `write` loop: swift-system's `FileDescriptor.writeAll` and its generic buffer handling cost a fifth
        // of a lone `$/ping`'s instructions.
        do { try Descriptor.writeAll(descriptor, pending.bytes) } catch {
            // The host is gone (EPIPE): the contract is to exit.
            exit(0)
        }
        pending.removeAll()
    }
}
