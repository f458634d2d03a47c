/// A value held by reference: immutable, so every copy of whatever holds it shares one allocation.
///
/// Why: the tree's trie rounds each node up to a power of two of its largest element, and an inline instance is
/// ~330 bytes, so nodes of inline instances were a third empty; boxed, a node holds 16 bytes per instance. And a field
/// few instances use (a wrapper's child entry) costs the others 8 bytes instead of ~170.
final class Boxed<Value: Hashable & Sendable>: Hashable, Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }

    static func == (lhs: Boxed, rhs: Boxed) -> Bool { lhs === rhs || lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
