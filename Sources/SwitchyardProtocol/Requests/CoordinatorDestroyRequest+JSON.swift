// `coordinator/destroy`'s params on the byte path (JSON/README.md), byte for byte what the `Encodable`
// conformance produces (`RouteRequestWritableTests`).

extension CoordinatorDestroyRequest.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"type\":", type)
        writer.append(UInt8(ascii: "}"))
    }
}
