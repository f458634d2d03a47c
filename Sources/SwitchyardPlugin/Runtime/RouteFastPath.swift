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
        writer.writeRaw("{\"content\":")
        switch content {
        case .screen(let screen):
            writer.writeRaw("{\"screen\":")
            screen.write(to: &writer)
        case .coordinator(let reference, let params):
            writer.writeRaw("{\"coordinator\":{")
            if let plugin = reference.plugin {
                writer.writeRaw("\"plugin\":")
                writer.writeString(plugin)
                writer.append(UInt8(ascii: ","))
            }
            writer.writeRaw("\"type\":")
            writer.writeString(reference.type)
            if let params {
                writer.writeRaw(",\"params\":")
                writer.write(params)
            }
            writer.append(UInt8(ascii: "}"))
        }
        writer.append(UInt8(ascii: "}"))
        if let state {
            writer.writeRaw(",\"state\":")
            writer.writeRawBytes(state)
        }
        writer.append(UInt8(ascii: "}"))
        return writer.bytes
    }
}

/// The single-value route inputs (``RouteParameter``'s conformances) read straight from their JSON value, with the
/// decoder's rules (an integer may be written `2.0`, a number may be an integer); nil for anything else, which the
/// decoder then reads and reports.
enum RouteScalar {
    static func decode<T>(_ type: T.Type, from value: JSONValue) -> T? {
        if T.self == String.self { return value.stringValue as? T }
        if T.self == Int.self { return value.intValue.flatMap { Int(exactly: $0) } as? T }
        if T.self == Int64.self { return value.intValue as? T }
        if T.self == Double.self { return value.doubleValue as? T }
        if T.self == Bool.self { return value.boolValue as? T }
        return nil
    }
}
