import SwitchyardProtocol

/// `coordinator/route`, the request a plugin answers most, without Codable for the shapes the protocol fixes: the
/// params are read field by field from the parsed line, a scalar route input straight from its JSON value
/// (``RouteScalar``), and the answer is written as bytes. Only the plugin author's own types (a struct input, the
/// coordinator's `State`) still go through Codable, as they must.
///
/// Why: profiled on the route hop, Codable was a third of the plugin's time (encoding the result 25 %, decoding the
/// params 11 %), almost all of it generic container dispatch. Whatever the fast path does not recognise (a field
/// of another type, a deep-link context) goes the Codable way, so an invalid request is reported exactly as before.
enum RouteFastPath {
    /// The params in their common shape, or nil for the Codable decoder to read (and to report, if it must).
    static func params(_ value: JSONValue?) -> CoordinatorRouteRequest.Params? {
        guard case .object(let object)? = value else { return nil }
        var instance: Int64?
        var type: String?
        var route: String?
        var transition: Transition?
        var params: JSONValue?
        for (key, member) in object {
            switch (key, member) {
            case ("instance", .int(let number)): instance = number
            case ("type", .string(let text)): type = text
            case ("route", .string(let text)): route = text
            case ("transition", .string(let text)):
                guard let known = Transition(rawValue: text) else { return nil }
                transition = known
            case ("params", .null), ("link", .null): continue
            case ("params", _): params = member
            case ("instance", _), ("type", _), ("route", _), ("transition", _), ("link", _): return nil
            default: continue  // unknown members are ignored, as the decoder ignores them
            }
        }
        guard let instance, let type, let route, let transition else { return nil }
        return CoordinatorRouteRequest.Params(
            instance: InstanceID(instance), type: type, route: route, transition: transition, params: params)
    }

    /// The result as `CoordinatorRouteRequest.Result`'s `Encodable` conformance writes it (member order included):
    /// `{"content":…,"state":…}`, the state already encoded.
    static func result(content: RouteContent, state: [UInt8]?) -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + (state?.count ?? 0))
        write(content: content, state: state, into: &writer)
        return writer.bytes
    }

    /// ``result(content:state:)`` written into `writer` (a response being written in place).
    static func write(content: RouteContent, state: [UInt8]?, into writer: inout JSONWriter) {
        writer.writeRawBytes(contentHead)
        if case .screen(let screen) = content {
            writer.writeRawBytes(screenHead)
            screen.write(to: &writer)
            writer.append(UInt8(ascii: "}"))
        } else {
            content.write(to: &writer)
        }
        if let state {
            writer.writeRawBytes(stateHead)
            writer.writeRawBytes(state)
        }
        writer.append(UInt8(ascii: "}"))
    }

    private static let contentHead = Array("{\"content\":".utf8)
    private static let screenHead = Array("{\"screen\":".utf8)
    private static let stateHead = Array(",\"state\":".utf8)
}

/// The single-value route inputs (``RouteParameter``'s conformances) read straight from their JSON value, with the
/// decoder's rules (an integer may be written `2.0`, a number may be an integer); a value of another kind is left to
/// the decoder, which reads it or reports it.
enum RouteScalar {
    /// A value of another kind than the reader's type.
    struct Mismatch: Error {}

    /// The reader for inputs of type `T`, or nil for a type it does not read. Each reader returns `T` itself and
    /// throws on a mismatch: one returning `T?` (or `Any?` cast to `T`) made the unspecialised generic route code
    /// look up `Optional<T>`'s metadata on every request, 330 instructions of a route's answer. The cast below runs
    /// once per route, when it is declared.
    static func reader<T>(for type: T.Type) -> (@Sendable (JSONValue) throws -> T)? {
        let reader: Any
        if T.self == String.self {
            reader = { @Sendable (value: JSONValue) throws -> String in try present(value.stringValue) }
        } else if T.self == Int.self {
            reader = { @Sendable (value: JSONValue) throws -> Int in
                try present(value.intValue.flatMap { Int(exactly: $0) })
            }
        } else if T.self == Int64.self {
            reader = { @Sendable (value: JSONValue) throws -> Int64 in try present(value.intValue) }
        } else if T.self == Double.self {
            reader = { @Sendable (value: JSONValue) throws -> Double in try present(value.doubleValue) }
        } else if T.self == Bool.self {
            reader = { @Sendable (value: JSONValue) throws -> Bool in try present(value.boolValue) }
        } else {
            return nil
        }
        return reader as? @Sendable (JSONValue) throws -> T
    }

    private static func present<V>(_ value: V?) throws -> V {
        guard let value else { throw Mismatch() }
        return value
    }
}

/// A coordinator type as the route fast lane reads it: its name and its routes' names as bytes, to compare with a
/// request's without making strings. A class, so a lookup retains one object rather than copying a `TypeInfo`;
/// parallel arrays, since a tuple per route was destroyed through the runtime's generic `tuple_destroy`.
@MainActor
final class LaneType {
    let name: [UInt8]
    let routeNames: [[UInt8]]
    let routeTexts: [String]
    let routes: [any AnyRoute]
    let encodeState: (@MainActor (any Coordinatable) -> [UInt8]?)?

    init(
        name: String, routes: [(name: String, route: any AnyRoute)],
        encodeState: (@MainActor (any Coordinatable) -> [UInt8]?)?
    ) {
        self.name = Array(name.utf8)
        routeNames = routes.map { Array($0.name.utf8) }
        routeTexts = routes.map(\.name)
        self.routes = routes.map(\.route)
        self.encodeState = encodeState
    }

    /// The position of the route named `line[name]`: a loop, not `firstIndex(where:)`, whose main-actor closure
    /// would check its executor on every call.
    func route(named name: Range<Int>, in line: Span<UInt8>) -> Int? {
        for position in routeNames.indices where Self.bytes(line, name, equal: routeNames[position]) { return position }
        return nil
    }

    static func bytes(_ line: Span<UInt8>, _ range: Range<Int>, equal name: [UInt8]) -> Bool {
        guard range.count == name.count else { return false }
        for offset in 0..<name.count where line[range.lowerBound + offset] != name[offset] { return false }
        return true
    }
}

extension PluginCore: RouteLane {
    /// `coordinator/route` for a scanned request: what ``routeEncoded(_:)`` does for one whose type is the
    /// instance's own and whose route it declares, and nil (nothing done) for anything else, which the general
    /// path answers, errors included, as it always has.
    func answerRoute(_ request: ScannedRoute, line: Span<UInt8>) throws -> RouteAnswer? {
        guard let object = instances[InstanceID(request.instance)],
            let lane = laneTypes[ObjectIdentifier(type(of: object))],
            LaneType.bytes(line, request.type, equal: lane.name),
            let position = lane.route(named: request.route, in: line)
        else { return nil }
        let context = OutputContext(core: self, parent: InstanceID(request.instance), route: lane.routeTexts[position])
        let content = try lane.routes[position].content(for: object, params: request.params, context: context)
        return RouteAnswer(content: content, state: lane.encodeState?(object))
    }
}
