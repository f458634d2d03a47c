/// Carries a loop-confined, non-`Sendable` value through `@Sendable` closures (NIO's `NIOLoopBound`).
///
/// The value may only be touched on its loop's thread; ``value`` checks that in debug builds. This is the one
/// sanctioned way for ``UVLoopRemote/execute(_:)`` jobs to reach host state.
public struct LoopBound<Value>: @unchecked Sendable {
    private let storage: Value
    private let loop: UVLoop

    public init(_ value: Value, loop: UVLoop) {
        self.storage = value
        self.loop = loop
    }

    /// The value. Must be read on the loop thread.
    public var value: Value {
        assert(loop.inLoopThread, "LoopBound value accessed off its loop thread")
        return storage
    }
}
