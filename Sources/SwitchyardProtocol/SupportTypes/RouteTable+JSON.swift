// Route-table types written straight to bytes, byte for byte what their `Encodable` conformances produce
// (`JSONStreamEncoderTests` pins them; see JSON/README.md).

extension PresentationOptions: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        var first = true
        writer.append(UInt8(ascii: "{"))
        if let detents {
            writer.key("detents", first: &first)
            writer.append(UInt8(ascii: "["))
            for (index, detent) in detents.enumerated() {
                if index > 0 { writer.append(UInt8(ascii: ",")) }
                writer.writeString(detent)
            }
            writer.append(UInt8(ascii: "]"))
        }
        if let interactiveDismissDisabled {
            writer.key("interactiveDismissDisabled", first: &first)
            writer.writeRaw(interactiveDismissDisabled ? "true" : "false")
        }
        if let customTransition {
            writer.key("customTransition", first: &first)
            writer.writeString(customTransition)
        }
        writer.append(UInt8(ascii: "}"))
    }
}
