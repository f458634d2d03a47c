// `coordinator/dismissed`'s params on the byte path (JSON/README.md), byte for byte what the `Encodable`
// conformance produces (`RouteRequestWritableTests`).

extension CoordinatorDismissedNotification.Params: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.openInstance(instance)
        writer.field(",\"entry\":", entry.rawValue)
        writer.field(",\"route\":", route)
        writer.field(",\"reason\":", reason.rawValue)
        writer.append(UInt8(ascii: "}"))
    }
}
