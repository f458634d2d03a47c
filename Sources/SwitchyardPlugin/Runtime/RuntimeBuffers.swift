import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Pending output, written in one `write` per batch.
struct Output {
    var descriptor: FileDescriptor?
    private var buffer: [UInt8] = []

    mutating func append(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        // Not started by ``PluginRuntime/run(_:)`` yet: keep the bytes until stdout is known.
        guard let descriptor else { return }
        do {
            _ = try descriptor.writeAll(buffer)
        } catch {
            // The host is gone (EPIPE): the contract is to exit.
            exit(0)
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Moves a main-actor object into a closure that only ever uses it back on the main actor.
struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
