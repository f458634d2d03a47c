import SwitchyardProtocol

/// Who answers a scanned `coordinator/route` (``PluginCore``, once attached): the runtime writes the answer straight
/// into its pending output, with no `JSONValue`, `Message` or responder on the way.
@MainActor
protocol RouteLane: AnyObject {
    /// The route's content and the instance's state after it (encoded), or nil having done nothing (an unknown
    /// instance, type or route: the general path then answers with its own error). Throws what the route's factory
    /// threw, for the runtime to answer as any handler's error. Writes nothing itself: a factory may log, and its
    /// line must leave before the answer.
    func answerRoute(_ route: ScannedRoute, line: Span<UInt8>) throws -> RouteAnswer?
}

/// What ``RouteLane/answerRoute(_:line:)`` found: a struct, since an optional tuple returned through the protocol
/// was destroyed by the runtime's generic `tuple_destroy`.
struct RouteAnswer {
    var content: RouteContent
    /// The instance's state after the route, encoded; nil for a type without state.
    var state: [UInt8]?
}

extension PluginRuntime {
    /// Handles `line[start..<end]`, one line from the host: a `$/ping` or `coordinator/route` in the shape hosts
    /// send is answered on the fast lane (``RequestScanner``, ``RouteLane``), written into the pending output in
    /// place; every other line goes the general way (parser, envelope, endpoint), as before.
    func serve(_ line: [UInt8], start: Int, end: Int, lineNumber: Int) {
        if fastLaneEnabled, let request = RequestScanner.scan(line.span, start: start, end: end),
            answerScanned(request, line)
        {
            // An error answer went through `send`, which hands an in-process peer its line itself.
            if let inProcessPeer, !output.pending.bytes.isEmpty { inProcessPeer(output.take()) }
            return
        }
        handle(MessageReader.decodeLine(line[start..<end], lineNumber: lineNumber))
    }

    /// Answers a scanned request; false when it must go the general way (a route the lane does not take).
    private func answerScanned(_ request: ScannedRequest, _ line: [UInt8]) -> Bool {
        switch request.method {
        case .ping:
            ResponseHead.write(id: request.id, of: line, into: &output.pending)
            output.pending.writeRawBytes(ResponseHead.emptyResultTail)
            return true
        case .route:
            guard let lane = routeLane else { return false }
            do {
                guard let answer = try lane.answerRoute(request.route, line: line.span) else { return false }
                ResponseHead.write(id: request.id, of: line, into: &output.pending)
                RouteFastPath.write(content: answer.content, state: answer.state, into: &output.pending)
                output.pending.writeRawBytes(ResponseHead.tail)
                return true
            } catch {
                send(
                    .errorResponse(
                        id: ResponseHead.requestID(request.id, of: line.span), error: Self.answer(for: error)))
                return true
            }
        }
    }
}

/// The bytes around a response's result, for answers written in place.
enum ResponseHead {
    private static let head = Array("{\"jsonrpc\":\"2.0\",\"id\":".utf8)
    private static let result = Array(",\"result\":".utf8)
    /// `{}` as the result, the response's end and the line's.
    static let emptyResultTail = Array("{}}\n".utf8)
    /// The response's end and the line's, after a result.
    static let tail = Array("}\n".utf8)

    /// `{"jsonrpc":"2.0","id":ID,"result":` with the id as the request wrote it (the scanner accepted only forms
    /// that encode back to the same bytes).
    static func write(id: Range<Int>, of line: [UInt8], into writer: inout JSONWriter) {
        writer.writeRawBytes(head)
        writer.writeRawBytes(line[id])
        writer.writeRawBytes(result)
    }

    /// The id as a value, for an error answer (a canonical integer, or a string without escapes).
    static func requestID(_ id: Range<Int>, of line: Span<UInt8>) -> RequestID {
        if line[id.lowerBound] == UInt8(ascii: "\"") {
            var text = ""
            for index in (id.lowerBound + 1)..<(id.upperBound - 1) {
                text.unicodeScalars.append(Unicode.Scalar(line[index]))
            }
            return .string(text)
        }
        var value: Int64 = 0
        var negative = false
        for index in id {
            let byte = line[index]
            if byte == UInt8(ascii: "-") {
                negative = true
            } else {
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
        }
        return .number(negative ? -value : value)
    }
}
