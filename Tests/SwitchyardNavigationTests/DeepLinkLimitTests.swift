@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// The request-data limits (spec §6) at their edges: the largest input under each is parsed completely, one more is
/// a typed `limitExceeded` naming the limit, its maximum and the input's count.
@Suite("Deep-link and chain limits", .timeLimit(.minutes(1)))
struct DeepLinkLimitTests {
    static let limits = RequestLimits.defaults

    static func expectLimit(_ limit: String, max: Int, actual: Int, _ body: () throws(ResponseError) -> Void) {
        do throws(ResponseError) {
            try body()
            Issue.record("\(limit): \(actual) was accepted")
        } catch {
            #expect(error.code == .limitExceeded)
            #expect(error.data?["limit"] == .string(limit))
            #expect(error.data?["max"] == .int(Int64(max)))
            #expect(error.data?["actual"] == .int(Int64(actual)))
            #expect(error.message.contains(limit) && error.message.contains("\(max)"))
        }
    }

    static func query(_ count: Int) -> String {
        "switchyard://todos?" + (0..<count).map { "k\($0)=v%20\($0)" }.joined(separator: "&")
    }

    static func path(_ count: Int) -> String {
        "switchyard://" + (0..<count).map { "s\($0)" }.joined(separator: "/")
    }

    @Test("maxQueryItems query items are parsed and decoded; one more is refused")
    func queryItems() throws {
        let max = Self.limits.maxQueryItems
        let link = try DeepLinkURL(parsing: Self.query(max))
        #expect(link.query.count == max)
        #expect(link.query["k\(max - 1)"] == "v \(max - 1)")
        Self.expectLimit("maxQueryItems", max: max, actual: max + 1) { () throws(ResponseError) in
            _ = try DeepLinkURL(parsing: Self.query(max + 1))
        }
        // Empty items (`&&`) are not items.
        #expect(try DeepLinkURL(parsing: Self.query(max) + "&&&").query.count == max)
    }

    @Test("maxPathSegments segments are parsed; one more is refused; empty segments do not count")
    func pathSegments() throws {
        let max = Self.limits.maxPathSegments
        let link = try DeepLinkURL(parsing: Self.path(max))
        #expect(link.segments.count == max)
        #expect(link.segments.last == "s\(max - 1)")
        #expect(try DeepLinkURL(parsing: Self.path(max) + "//").segments.count == max)
        Self.expectLimit("maxPathSegments", max: max, actual: max + 1) { () throws(ResponseError) in
            _ = try DeepLinkURL(parsing: Self.path(max + 1))
        }
    }

    @Test("limits are configurable")
    func configured() throws {
        let small = RequestLimits(maxQueryItems: 2, maxPathSegments: 3)
        #expect(try DeepLinkURL(parsing: "a/b/c?x=1&y=2", limits: small).segments == ["a", "b", "c"])
        Self.expectLimit("maxPathSegments", max: 3, actual: 4) { () throws(ResponseError) in
            _ = try DeepLinkURL(parsing: "a/b/c/d", limits: small)
        }
        Self.expectLimit("maxQueryItems", max: 2, actual: 3) { () throws(ResponseError) in
            _ = try DeepLinkURL(parsing: "a?x&y&z", limits: small)
        }
    }

    @Test("maxChainSteps steps pass; one more is refused")
    func chainSteps() throws {
        let max = Self.limits.maxChainSteps
        try Self.limits.check(steps: Array(repeating: .route("item"), count: max))
        Self.expectLimit("maxChainSteps", max: max, actual: max + 1) { () throws(ResponseError) in
            try Self.limits.check(steps: Array(repeating: .route("item"), count: max + 1))
        }
    }

    @Test("maxParamsKeys keys in any params object pass; one more, at the top or nested, is refused")
    func paramsKeys() throws {
        let max = Self.limits.maxParamsKeys
        func object(_ count: Int) -> JSONValue {
            var object = JSONObject()
            for index in 0..<count { object["k\(index)"] = .int(Int64(index)) }
            return .object(object)
        }
        try Self.limits.check(steps: [.route("item", object(max)), .route("item", ["list": [object(max)]])])
        Self.expectLimit("maxParamsKeys", max: max, actual: max + 1) { () throws(ResponseError) in
            try Self.limits.check(steps: [.route("item", object(max + 1))])
        }
        Self.expectLimit("maxParamsKeys", max: max, actual: max + 1) { () throws(ResponseError) in
            try Self.limits.check(steps: [.route("item"), .route("item", ["a": ["b": [object(max + 1)]]])])
        }
    }

    @Test("a link at both limits resolves, carrying its whole query to the hop that takes it")
    func resolvesAtTheLimits() throws {
        var app = try App()
        try app.logIn()
        let url =
            "switchyard://todos/todo/42?"
            + (0..<Self.limits.maxQueryItems).map { "k\($0)=\($0)" }.joined(separator: "&")
        let plan = try app.resolve(url)
        #expect(plan.links.values.allSatisfy { $0.query.count == Self.limits.maxQueryItems })
        _ = try app.open(url)
    }
}
