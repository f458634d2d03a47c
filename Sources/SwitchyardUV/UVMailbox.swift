import CLibUV
import Synchronization

/// A mailbox into the loop (`uv_async_t`): any thread posts values, the loop receives them in order, in batches,
/// with its own (loop-confined) handler.
///
/// ``UVLoopRemote/execute(_:)`` runs `@Sendable` jobs, which cannot reach the loop's non-`Sendable` objects; a mailbox
/// carries `Sendable` values instead, and the receiving side, created on the loop, holds whatever it needs. Posting
/// after the mailbox closed drops the value and answers `false` (libuv's `uv_async_send` on a closed handle would be
/// undefined: the address is cleared under the lock before the handle closes).
///
/// - Important: Create, receive and close on the loop's thread; ``poster`` works from any thread.
public final class UVMailbox<Value: Sendable>: UVHandle {
    /// The thread-safe face of a mailbox.
    public struct Poster: Sendable {
        fileprivate let shared: Shared

        /// Posts `value` to the loop; false if the mailbox has closed.
        @discardableResult
        public func post(_ value: Value) -> Bool {
            shared.state.withLock { state in
                guard state.address != 0, let handle = UnsafeMutablePointer<uv_async_t>(bitPattern: state.address)
                else {
                    return false
                }
                state.values.append(value)
                // Coalesced by libuv; under the lock so close() cannot free the handle meanwhile.
                uv_async_send(handle)
                return true
            }
        }
    }

    fileprivate final class Shared: Sendable {
        struct State {
            var values: [Value] = []
            /// The `uv_async_t*` as an integer while open, 0 otherwise.
            var address: UInt = 0
        }
        let state = Mutex(State())
    }

    private let shared = Shared()
    private let receive: ([Value]) -> Void

    /// Opens a mailbox on `loop`; `receive` gets what was posted, in order, on the loop's thread.
    public init(loop: UVLoop, receive: @escaping ([Value]) -> Void) throws(UVError) {
        self.receive = receive
        super.init(loop: loop, type: UV_ASYNC)
        guard let raw else { throw UVError.closed("uv_async_init") }
        let status = uv_async_init(loop.raw, raw.assumingMemoryBound(to: uv_async_t.self), mailboxCallback)
        if status < 0 {
            abandon()
            throw UVError(code: status, operation: "uv_async_init")
        }
        adopt()
        shared.state.withLock { $0.address = UInt(bitPattern: raw) }
    }

    /// Where other threads post.
    public var poster: Poster { Poster(shared: shared) }

    fileprivate func drain() {
        let values = shared.state.withLock { state -> [Value] in
            defer { state.values.removeAll(keepingCapacity: true) }
            return state.values
        }
        if !values.isEmpty { receive(values) }
    }

    override func willClose() {
        shared.state.withLock { state in
            state.address = 0
            state.values.removeAll()
        }
    }

    override var kindName: String { "mailbox" }
}

/// Recovers the mailbox through an erased base, since a generic class cannot be named in a C callback literal.
private protocol MailboxDraining: AnyObject { func drainMailbox() }

extension UVMailbox: MailboxDraining {
    fileprivate func drainMailbox() { drain() }
}

private let mailboxCallback: uv_async_cb = { handle in
    guard let data = handle?.pointee.data else { return }
    (Unmanaged<UVHandle>.fromOpaque(data).takeUnretainedValue() as? any MailboxDraining)?.drainMailbox()
}
