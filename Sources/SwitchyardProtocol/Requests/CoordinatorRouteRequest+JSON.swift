// `coordinator/route` on the byte path (JSON/README.md): the params the host writes per hop, byte for byte what
// the `Encodable` conformance produces, and the answer it reads from the parsed tree as the `Decodable` conformance
// reads it (`RouteRequestWritableTests` pins both). A deep link across four plugins sends one per hop; through
// Codable's generic containers the navigation path was about 40% of the host's instructions per link.

extension CoordinatorRouteRequest.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"type\":", type)
        writer.field(",\"route\":", route)
        writer.field(",\"transition\":", transition.rawValue)
        var first = false
        writer.member("params", params, first: &first)
        writer.member("link", link, first: &first)
        writer.append(UInt8(ascii: "}"))
    }
}

extension CoordinatorRouteRequest.Result {
    /// The answer read straight from the parsed tree, exactly as its `Decodable` conformance reads it, or nil for
    /// anything that conformance would reject: the caller then decodes it with Codable, which names what is wrong,
    /// so errors stay as they were. Every route answer passes here, and Codable's keyed containers cost about as
    /// much as the rest of the host's work on it.
    public init?(reading value: JSONValue) {
        guard case .object(let object) = value, let content = object["content"].flatMap(RouteContent.init(reading:))
        else { return nil }
        self.init(content: content, state: object["state"])
    }
}
