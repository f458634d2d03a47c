import SwitchyardProtocol

/// A `$/ping` or `coordinator/route` request read straight from its line: where its id is, and for a route the
/// members of its params, without a `JSONValue` tree, an envelope or a `String` per member.
///
/// The id is kept as the bytes it was written with: an id is echoed in the answer, and for the forms the scanner
/// accepts (a canonical integer, a string of printable ASCII without escapes) those bytes are exactly what encoding
/// the parsed id would write.
struct ScannedRequest {
    enum Method { case ping, route }

    var method: Method
    /// The id as written in the line (a string id with its quotes).
    var id: Range<Int>
    /// The route's params (empty for a ping, whose params were checked and are ignored).
    var route: ScannedRoute
}

/// `coordinator/route` params as the host writes them: names as byte ranges of the line (compared to the declared
/// names, never made into strings), the route's own input as a flat `JSONValue` object.
/// Plain fields rather than optionals: destroying a struct of optionals went through generic value witnesses, a
/// measurable part of a route's cost.
struct ScannedRoute {
    var instance: Int64 = 0
    var type = 0..<0
    var route = 0..<0
    var transition = Transition.push
    var params: JSONValue?
    /// Whether `instance`, `type`, `route` and `transition` were all there: the members the decoder requires.
    var isComplete = false
}

/// Reads a request line in the shape hosts write it, strictly: anything else (another method, an escape in a
/// string, a fraction, a nested input, an unknown or repeated member, invalid JSON) answers nil *before any side
/// effect*, and the line goes the general way (parser, envelope checks, endpoint), which answers it, or reports it,
/// exactly as it always has. So the scanner only has to be right about what it accepts, which is small.
///
/// Why: parsing a route line into a `JSONValue` tree, classifying the envelope and decoding the params was two
/// thirds of what a `coordinator/route` cost the plugin (callgrind, per message).
struct RequestScanner {
    private var index: Int
    private let end: Int

    private init(start: Int, end: Int) {
        index = start
        self.end = end
    }

    /// The request on `line[start..<end]` (one line, without its terminator), or nil for the general path.
    static func scan(_ line: Span<UInt8>, start: Int, end: Int) -> ScannedRequest? {
        var scanner = RequestScanner(start: start, end: end)
        return scanner.request(line)
    }

    // MARK: - The envelope

    private mutating func request(_ s: Span<UInt8>) -> ScannedRequest? {
        guard open(s) else { return nil }
        var seen: UInt8 = 0
        var id: Range<Int>?
        var method: ScannedRequest.Method?
        var route = ScannedRoute()
        var hasParams = false
        repeat {
            guard let key = key(s) else { return nil }
            let bit: UInt8 =
                if key == Names.jsonrpc { 1 } else if key == Names.id { 2 } else if key == Names.method {
                    4
                } else if key == Names.params { 8 } else { 0 }
            guard bit != 0, seen & bit == 0 else { return nil }
            seen |= bit
            switch bit {
            case 1:
                guard let version = plainString(s), PackedName(s, version) == Names.version else { return nil }
            case 2:
                guard let value = requestID(s) else { return nil }
                id = value
            case 4:
                guard let name = plainString(s) else { return nil }
                let packed = PackedName(s, name)
                if packed == Names.ping {
                    method = .ping
                } else if packed == Names.route {
                    method = .route
                } else {
                    return nil
                }
            default:  // params: null, an empty array, or an object in the route's shape
                if literal(s, Names.null, 4) { continue }
                if peek(s) == UInt8(ascii: "[") {
                    index += 1
                    skipWhitespace(s)
                    guard peek(s) == UInt8(ascii: "]") else { return nil }
                    index += 1
                    hasParams = true
                    continue
                }
                guard let params = routeParams(s) else { return nil }
                route = params
                hasParams = true
            }
        } while next(s)
        guard close(s), let id, let method, seen & 1 != 0 else { return nil }
        skipWhitespace(s)
        guard index == end else { return nil }
        switch method {
        case .ping:
            return ScannedRequest(method: .ping, id: id, route: route)
        case .route:
            // Params an array, or missing members: the decoder's error message, not ours.
            guard hasParams, route.isComplete else { return nil }
            return ScannedRequest(method: .route, id: id, route: route)
        }
    }

    /// An integer id in canonical form (what writing it back produces), or a string id of printable ASCII.
    private mutating func requestID(_ s: Span<UInt8>) -> Range<Int>? {
        let start = index
        if peek(s) == UInt8(ascii: "\"") {
            index += 1
            while index < end {
                let byte = s[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return start..<index
                }
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }
        guard integer(s) != nil, !(s[start] == UInt8(ascii: "-") && s[start + 1] == UInt8(ascii: "0")) else {
            return nil
        }
        return start..<index
    }

    // MARK: - Route params

    private mutating func routeParams(_ s: Span<UInt8>) -> ScannedRoute? {
        guard open(s) else { return nil }
        var route = ScannedRoute()
        var seen: UInt8 = 0
        if peek(s) == UInt8(ascii: "}") {
            index += 1
            return route
        }
        repeat {
            guard let key = key(s) else { return nil }
            let bit: UInt8 =
                if key == Names.instance { 1 } else if key == Names.type { 2 } else if key == Names.route_ {
                    4
                } else if key == Names.transition { 8 } else if key == Names.params { 16 } else if key == Names.link {
                    32
                } else { 0 }
            guard bit != 0, seen & bit == 0 else { return nil }
            seen |= bit
            switch bit {
            case 1: guard let value = integer(s) else { return nil }; route.instance = value
            case 2: guard let value = plainString(s) else { return nil }; route.type = value
            case 4: guard let value = plainString(s) else { return nil }; route.route = value
            case 8:
                guard let value = plainString(s), let known = Names.transition(PackedName(s, value)) else { return nil }
                route.transition = known
            case 16:
                if literal(s, Names.null, 4) { continue }
                guard let input = flatObject(s) else { return nil }
                route.params = input
            default:  // link: only its absence (null) is this path's; a deep-link context goes the general way
                guard literal(s, Names.null, 4) else { return nil }
            }
        } while next(s)
        guard close(s) else { return nil }
        route.isComplete = seen & 0b1111 == 0b1111
        return route
    }

    /// A route's input: an object of strings, integers, booleans and nulls (a scalar input, or a flat struct).
    private mutating func flatObject(_ s: Span<UInt8>) -> JSONValue? {
        guard open(s) else { return nil }
        var object = JSONObject(minimumCapacity: 2)
        if peek(s) == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        repeat {
            guard let name = plainString(s), let key = text(s, name), punctuation(s, UInt8(ascii: ":")),
                let value = scalar(s)
            else { return nil }
            object[key] = value  // a repeated key keeps its first place and its last value, as the parser does
        } while next(s)
        guard close(s) else { return nil }
        return .object(object)
    }

    private mutating func scalar(_ s: Span<UInt8>) -> JSONValue? {
        switch peek(s) {
        case UInt8(ascii: "\""):
            guard let range = plainString(s), let value = text(s, range) else { return nil }
            return .string(value)
        case UInt8(ascii: "t"): return literal(s, Names.true, 4) ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal(s, Names.false, 5) ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal(s, Names.null, 4) ? .null : nil
        default: return integer(s).map { .int($0) }
        }
    }

    // MARK: - Tokens

    @inline(__always)
    private func peek(_ s: Span<UInt8>) -> UInt8? { index < end ? s[index] : nil }

    @inline(__always)
    private mutating func skipWhitespace(_ s: Span<UInt8>) {
        while index < end {
            let byte = s[index]
            guard byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A else { return }
            index += 1
        }
    }

    /// `{` and the whitespace around it.
    private mutating func open(_ s: Span<UInt8>) -> Bool { punctuation(s, UInt8(ascii: "{")) }

    /// After a member: true for `,` (another member follows), false at `}` (left for ``close(_:)``) or anything else.
    private mutating func next(_ s: Span<UInt8>) -> Bool { punctuation(s, UInt8(ascii: ",")) }

    /// `byte` (`{`, `,` or `:`), and the whitespace around it.
    private mutating func punctuation(_ s: Span<UInt8>, _ byte: UInt8) -> Bool {
        skipWhitespace(s)
        guard peek(s) == byte else { return false }
        index += 1
        skipWhitespace(s)
        return true
    }

    /// The `}` ending an object.
    private mutating func close(_ s: Span<UInt8>) -> Bool {
        guard peek(s) == UInt8(ascii: "}") else { return false }
        index += 1
        return true
    }

    /// A member's key, packed, and the `:` after it.
    private mutating func key(_ s: Span<UInt8>) -> PackedName? {
        guard let name = plainString(s), punctuation(s, UInt8(ascii: ":")) else { return nil }
        return PackedName(s, name)
    }

    /// A string without escapes or control characters: the range of its contents.
    private mutating func plainString(_ s: Span<UInt8>) -> Range<Int>? {
        guard peek(s) == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        while index < end {
            let byte = s[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<(index - 1)
            }
            guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// The string in `range`, if it is valid UTF-8.
    private func text(_ s: Span<UInt8>, _ range: Range<Int>) -> String? {
        guard let valid = try? UTF8Span(validating: s.extracting(range)) else { return nil }
        return String(copying: valid)
    }

    /// An integer the parser would read exactly: no leading zero, no fraction or exponent, at most 18 digits.
    private mutating func integer(_ s: Span<UInt8>) -> Int64? {
        var negative = false
        if peek(s) == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let digitsStart = index
        var value: Int64 = 0
        while index < end, s[index] &- UInt8(ascii: "0") < 10 {
            value = value &* 10 &+ Int64(s[index] &- UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - digitsStart
        guard digits > 0, digits <= 18, digits == 1 || s[digitsStart] != UInt8(ascii: "0") else { return nil }
        if let byte = peek(s), byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            return nil
        }
        return negative ? -value : value
    }

    /// The literal packed in `word` (`count` bytes, at most 8).
    private mutating func literal(_ s: Span<UInt8>, _ word: UInt64, _ count: Int) -> Bool {
        guard end - index >= count else { return false }
        for offset in 0..<count where UInt64(s[index + offset]) != (word >> (8 * UInt64(offset))) & 0xFF {
            return false
        }
        index += count
        return true
    }
}

/// Up to 24 bytes of a name packed into three words: comparing a scanned name with a known one is four integer
/// compares, with no `String` made and no array walked.
struct PackedName: Equatable {
    var count: Int
    var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

    init(_ text: String) {
        let bytes = Array(text.utf8)
        self.init(bytes.span, 0..<bytes.count)
    }

    /// The name in `line[range]` (a longer one keeps its length, so it equals no known name).
    init(_ line: Span<UInt8>, _ range: Range<Int>) {
        count = range.count
        let start = range.lowerBound
        words.0 = Self.word(line, start, min(range.upperBound, start + 8))
        if count > 8 {
            words.1 = Self.word(line, start + 8, min(range.upperBound, start + 16))
            if count > 16 { words.2 = Self.word(line, start + 16, min(range.upperBound, start + 24)) }
        }
    }

    @inline(__always)
    private static func word(_ line: Span<UInt8>, _ start: Int, _ end: Int) -> UInt64 {
        var word: UInt64 = 0
        var index = end
        while index > start {
            index -= 1
            word = word << 8 | UInt64(line[index])
        }
        return word
    }

    static func == (lhs: PackedName, rhs: PackedName) -> Bool {
        lhs.count == rhs.count && lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
    }
}

/// The names and literals the scanner knows.
private enum Names {
    static let jsonrpc = PackedName("jsonrpc"), id = PackedName("id"), method = PackedName("method"),
        params = PackedName("params")
    static let version = PackedName("2.0"), ping = PackedName(PingRequest.method),
        route = PackedName(CoordinatorRouteRequest.method)
    static let instance = PackedName("instance"), type = PackedName("type"), route_ = PackedName("route"),
        transition = PackedName("transition")
    static let link = PackedName("link")
    static let transitions: [(name: PackedName, value: Transition)] = Transition.allCases.map {
        (PackedName($0.rawValue), $0)
    }
    /// `null`, `true` and `false`, packed for ``RequestScanner/literal(_:_:_:)``.
    static let null = PackedName("null").words.0, `true` = PackedName("true").words.0,
        `false` = PackedName("false").words.0

    static func transition(_ name: PackedName) -> Transition? {
        for known in transitions where known.name == name { return known.value }
        return nil
    }
}
