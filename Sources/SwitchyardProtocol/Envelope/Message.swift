/// One JSON-RPC 2.0 message, as carried on one line.
///
/// `params` is kept as a ``JSONValue`` and decoded into the method's typed `Params` exactly once, by whoever handles
/// the method (LSP's registry approach: no re-encoding round trip).
public enum Message: Sendable, Equatable {
    case request(id: RequestID, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)
    case response(id: RequestID, result: JSONValue)
    /// An error response. `id` is nil only when the request's id could not be read (e.g. a parse error).
    case errorResponse(id: RequestID?, error: ResponseError)

    public var method: String? {
        switch self {
        case .request(_, let method, _), .notification(let method, _): method
        case .response, .errorResponse: nil
        }
    }
}

/// Why a parsed JSON value is not a valid message, with the request id when one could be read (so the peer can
/// still be answered).
public struct EnvelopeError: Error, Sendable, Equatable {
    public let error: ResponseError
    public let id: RequestID?
    /// The offending field, e.g. `jsonrpc` or `id`.
    public let field: String?
}

extension Message {
    /// Classifies a parsed line.
    public static func decode(_ value: JSONValue) -> Result<Message, EnvelopeError> {
        guard case .object(let object) = value else {
            return .failure(invalid("a message must be a JSON object, found \(value.kindName)", field: nil, id: nil))
        }
        let rawID = object["id"]
        var id: RequestID?
        if let rawID, rawID != .null {
            guard let parsed = RequestID(json: rawID) else {
                return .failure(invalid("'id' must be an integer or a string", field: "id", id: nil))
            }
            id = parsed
        }
        guard object["jsonrpc"] == .string("2.0") else {
            return .failure(invalid("'jsonrpc' must be \"2.0\"", field: "jsonrpc", id: id))
        }
        if let methodValue = object["method"] {
            guard case .string(let method) = methodValue, !method.isEmpty else {
                return .failure(invalid("'method' must be a non-empty string", field: "method", id: id))
            }
            let params = object["params"]
            if let params {
                switch params {
                case .object, .array, .null: break
                default: return .failure(invalid("'params' must be an object or an array", field: "params", id: id))
                }
            }
            if object["result"] != nil || object["error"] != nil {
                return .failure(invalid("a request cannot carry 'result' or 'error'", field: "result", id: id))
            }
            guard let id else {
                if rawID == .null {
                    return .failure(invalid("'id' must not be null", field: "id", id: nil))
                }
                return .success(.notification(method: method, params: params == .null ? nil : params))
            }
            return .success(.request(id: id, method: method, params: params == .null ? nil : params))
        }
        let result = object["result"]
        let errorValue = object["error"]
        switch (result, errorValue) {
        case (.some(let result), nil):
            guard let id else { return .failure(invalid("a response needs an 'id'", field: "id", id: nil)) }
            return .success(.response(id: id, result: result))
        case (nil, .some(let errorValue)):
            guard let error = ResponseError(json: errorValue) else {
                return .failure(
                    invalid(
                        "'error' must be an object with integer 'code' and string 'message'", field: "error", id: id))
            }
            return .success(.errorResponse(id: id, error: error))
        case (.some, .some):
            return .failure(invalid("a response carries 'result' or 'error', not both", field: "result", id: id))
        case (nil, nil):
            return .failure(invalid("a message needs 'method', 'result' or 'error'", field: "method", id: id))
        }
    }

    private static func invalid(_ message: String, field: String?, id: RequestID?) -> EnvelopeError {
        var data = JSONObject()
        if let field { data["field"] = .string(field) }
        return EnvelopeError(
            error: ResponseError(.invalidRequest, message, data: data.isEmpty ? nil : .object(data)), id: id,
            field: field)
    }
}

// MARK: - Encoding

extension Message {
    /// The message as one line, newline included.
    public func encodedLine() -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        encode(into: &writer)
        writer.append(0x0A)
        return writer.bytes
    }

    /// A response line around a result that is already encoded JSON (a large snapshot encoded once, straight to
    /// bytes, instead of through a `JSONValue`).
    public static func responseLine(id: RequestID, encodedResult: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: encodedResult.count + 48)
        writer.writeRaw("{\"jsonrpc\":\"2.0\",\"id\":")
        writer.write(id.json)
        writer.writeRaw(",\"result\":")
        writer.writeRawBytes(encodedResult)
        writer.writeRaw("}\n")
        return writer.bytes
    }

    /// A request line around params that are already encoded JSON.
    public static func requestLine(id: RequestID, method: String, encodedParams: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: encodedParams.count + method.utf8.count + 64)
        writer.writeRaw("{\"jsonrpc\":\"2.0\",\"id\":")
        writer.write(id.json)
        writer.writeRaw(",\"method\":")
        writer.writeString(method)
        writer.writeRaw(",\"params\":")
        writer.writeRawBytes(encodedParams)
        writer.writeRaw("}\n")
        return writer.bytes
    }

    /// A notification line around params that are already encoded JSON.
    public static func notificationLine(method: String, encodedParams: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: encodedParams.count + method.utf8.count + 48)
        writer.writeRaw("{\"jsonrpc\":\"2.0\",\"method\":")
        writer.writeString(method)
        writer.writeRaw(",\"params\":")
        writer.writeRawBytes(encodedParams)
        writer.writeRaw("}\n")
        return writer.bytes
    }

    /// Writes the compact JSON of the message (no newline).
    public func encode(into writer: inout JSONWriter) {
        writer.writeRaw("{\"jsonrpc\":\"2.0\"")
        switch self {
        case .request(let id, let method, let params):
            writer.writeRaw(",\"id\":")
            writer.write(id.json)
            writer.writeRaw(",\"method\":")
            writer.writeString(method)
            if let params {
                writer.writeRaw(",\"params\":")
                writer.write(params)
            }
        case .notification(let method, let params):
            writer.writeRaw(",\"method\":")
            writer.writeString(method)
            if let params {
                writer.writeRaw(",\"params\":")
                writer.write(params)
            }
        case .response(let id, let result):
            writer.writeRaw(",\"id\":")
            writer.write(id.json)
            writer.writeRaw(",\"result\":")
            writer.write(result)
        case .errorResponse(let id, let error):
            writer.writeRaw(",\"id\":")
            writer.write(id?.json ?? .null)
            writer.writeRaw(",\"error\":")
            writer.write(error.json)
        }
        writer.append(UInt8(ascii: "}"))
    }

    /// The message as a JSON value (for transcripts and tests).
    public var json: JSONValue {
        // Encoding then parsing our own output cannot fail; fall back to null rather than trap if it ever did.
        (try? JSONParser.parse(encodedLine().dropLast())) ?? .null
    }
}
