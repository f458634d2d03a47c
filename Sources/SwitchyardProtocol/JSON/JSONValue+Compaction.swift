/// Values kept for a long time (an instance's state and params, an entry's params and props) held at their size.
///
/// Why: the parser reserves room for six members in every object and grows arrays by doubling, which is right for a
/// message read once and dropped, and wrong for a value the tree keeps for the life of an instance: a parsed
/// `{"opened":0}` holds 352 bytes of arrays for one member, and a tree of 10,000 instances holds two or three such
/// values each.
extension JSONValue {
    /// The value with every array and object at its size; the value itself (its storage shared, nothing allocated)
    /// when it already is.
    public func compacted() -> JSONValue { compactedIfLoose() ?? self }

    /// Nil when nothing in the value is over its size (the usual case once a value has been compacted), so a caller
    /// writes back only what changed.
    public func compactedIfLoose() -> JSONValue? {
        switch self {
        case .array(let items): items.compactedIfLoose().map { .array($0) }
        case .object(let object): object.compactedIfLoose().map { .object($0) }
        case .null, .bool, .int, .double, .string: nil
        }
    }
}

extension JSONObject {
    func compactedIfLoose() -> JSONObject? {
        var result: JSONObject?
        if keys.isLoose || values.isLoose {
            var copy = self
            copy.keys = keys.exactCopy()
            copy.values = values.exactCopy()
            result = copy
        }
        for index in values.indices {
            guard let value = values[index].compactedIfLoose() else { continue }
            if result == nil {
                var copy = self
                copy.values = values.exactCopy()
                result = copy
            }
            result?.values[index] = value
        }
        return result
    }
}

extension [JSONValue] {
    func compactedIfLoose() -> [JSONValue]? {
        var result: [JSONValue]? = isLoose ? exactCopy() : nil
        for index in indices {
            guard let value = self[index].compactedIfLoose() else { continue }
            if result == nil { result = exactCopy() }
            result?[index] = value
        }
        return result
    }
}

extension Array {
    /// More than one element of room beyond the count (an allocation rounds up by less than that).
    fileprivate var isLoose: Bool { capacity > count + 1 }

    /// A copy whose storage holds the elements and no more.
    fileprivate func exactCopy() -> [Element] {
        var copy: [Element] = []
        copy.reserveCapacity(count)
        copy.append(contentsOf: self)
        return copy
    }
}
