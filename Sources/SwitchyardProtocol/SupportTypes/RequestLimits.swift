/// Bounds on the data of one request (a deep link, a `navigate` chain), checked before any work is done on it.
///
/// The line-length limit alone does not bound the work: a 340 KB deep link of 40,000 query items fits in a line,
/// and the host's loop then spent seconds on it while plugins waited. Each default is far above what a real app
/// sends, and low enough that the largest request under every limit is handled in a few milliseconds.
/// A request over a limit fails with `-32004 limitExceeded` whose `data` is
/// `{"limit": NAME, "max": LIMIT, "actual": COUNT}` (plus `field`), and nothing changes.
public struct RequestLimits: Sendable, Equatable {
    /// Query items in one deep link (`?a=1&b=2` has two).
    public var maxQueryItems: Int
    /// Path segments in one deep link, the URL's host included (empty segments are not counted).
    public var maxPathSegments: Int
    /// Steps in one `navigate` chain.
    public var maxChainSteps: Int
    /// Keys in any one object inside a step's `params` (the params object itself and every object nested in it).
    public var maxParamsKeys: Int

    public init(
        maxQueryItems: Int = 1_024, maxPathSegments: Int = 256, maxChainSteps: Int = 256, maxParamsKeys: Int = 1_024
    ) {
        self.maxQueryItems = maxQueryItems
        self.maxPathSegments = maxPathSegments
        self.maxChainSteps = maxChainSteps
        self.maxParamsKeys = maxParamsKeys
    }

    /// The limits the host applies unless configured otherwise.
    public static let defaults = RequestLimits()

    /// Fails when `steps` has more steps than ``maxChainSteps`` or a step's params hold an object with more keys than
    /// ``maxParamsKeys``. O(size of the params), with no recursion deeper than the parser already allowed.
    public func check(steps: [NavigationStep]) throws(ResponseError) {
        guard steps.count <= maxChainSteps else {
            throw .limitExceeded(
                "maxChainSteps", max: maxChainSteps, actual: steps.count, field: "steps", what: "steps in one chain")
        }
        for (index, step) in steps.enumerated() {
            guard let params = step.params else { continue }
            if let largest = Self.largestObject(in: params), largest > maxParamsKeys {
                throw .limitExceeded(
                    "maxParamsKeys", max: maxParamsKeys, actual: largest, field: "steps[\(index)].params",
                    what: "keys in one params object")
            }
        }
    }

    /// Checks one params object a request carries outside a chain (`user/action`), as a step's params are.
    public func check(params: JSONValue?, field: String) throws(ResponseError) {
        guard let params, let largest = Self.largestObject(in: params), largest > maxParamsKeys else { return }
        throw .limitExceeded(
            "maxParamsKeys", max: maxParamsKeys, actual: largest, field: field, what: "keys in one params object")
    }

    /// The most keys of any object in `value` (nil when it holds no object); iterative, so any depth is safe.
    static func largestObject(in value: JSONValue) -> Int? {
        var largest: Int?
        var pending = [value]
        while let next = pending.popLast() {
            switch next {
            case .object(let object):
                largest = Swift.max(largest ?? 0, object.count)
                pending.append(contentsOf: object.values)
            case .array(let elements):
                pending.append(contentsOf: elements)
            default:
                break
            }
        }
        return largest
    }
}

extension ResponseError {
    /// A request-data limit of ``RequestLimits`` was exceeded: `data` names the limit, its value and the request's.
    public static func limitExceeded(
        _ limit: String, max: Int, actual: Int, field: String, what: String
    ) -> ResponseError {
        ResponseError(
            .limitExceeded, "\(actual) \(what) exceed the limit of \(max) (\(limit))",
            data: [
                "limit": .string(limit), "max": .int(Int64(max)), "actual": .int(Int64(actual)),
                "field": .string(field),
            ])
    }
}
