// `coordinator/tabSelected`'s params on the byte path (JSON/README.md), byte for byte what the `Encodable`
// conformance produces (`RouteRequestWritableTests`).

extension CoordinatorTabSelectedNotification.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"tab\":", tab)
        writer.writeRaw(isRepeat ? ",\"isRepeat\":true}" : ",\"isRepeat\":false}")
    }
}
