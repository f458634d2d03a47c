public import SwitchyardHost
public import SwitchyardProtocol
import SwitchyardSystem

/// One fault of an experiment with its targets resolved: what runs, in order of `startMs`.
public struct ScheduledFault: Sendable, Equatable, CustomStringConvertible {
    /// Its index in the experiment's `faults`.
    public let index: Int
    public let kind: ExperimentSpec.Fault.Kind
    public let plugins: [String]
    public let startMs: Int
    /// When its healing step runs (nil: the host heals it, by a restart).
    public let healMs: Int?
    public let toxics: [Toxic]
    /// `slowStart`: how long each start's handshake is held.
    public let startDelayMs: Int
    /// `limits`: what is put on the process.
    public let limits: PluginLimitsRequest.Limits

    public var description: String {
        "\(startMs) ms \(kind.rawValue) \(plugins.joined(separator: ","))"
            + (healMs.map { " healed at \($0) ms" } ?? "")
    }
}

extension ExperimentSpec {
    /// Plugins a random target is not chosen among while an earlier fault on them may still be settling: a
    /// restart takes its backoff, and hitting a plugin again before it is back counts towards `maxRestarts`.
    static let settleMs = 5_000

    /// The faults with their targets resolved over `plugins` (the app's, in manifest order), in order of start.
    /// A pure function of the experiment: the same seed gives the same schedule (§22.2).
    public func schedule(plugins: [String]) -> [ScheduledFault] {
        var generator = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        var lastHit: [String: Int] = [:]
        let ordered = faults.enumerated().sorted { ($0.element.startMs, $0.offset) < ($1.element.startMs, $1.offset) }
        return ordered.map { index, fault in
            let targets: [String]
            switch fault.target {
            case .plugin(let name): targets = [name]
            case .plugins(let names): targets = names
            case .all: targets = plugins
            case .host: targets = []
            case .random:
                let rested = plugins.filter { fault.startMs - (lastHit[$0] ?? Int.min / 2) >= Self.settleMs }
                let pool = rested.isEmpty ? plugins : rested
                targets = pool.isEmpty ? [] : [pool[Int(generator.next() % UInt64(pool.count))]]
            }
            for target in targets { lastHit[target] = fault.startMs }
            let heal: Int? =
                switch fault.kind {
                case .kill, .flood, .crashOnRestore: nil
                case .stop: fault.durationMs.map { fault.startMs + $0 }
                case .pipes, .slowStart, .limits: fault.startMs + (fault.durationMs ?? 1_000)
                case .hostKill: fault.startMs + (fault.durationMs ?? 0)
                case .diskFull: fault.startMs + (fault.durationMs ?? 2_000)
                }
            return ScheduledFault(
                index: index, kind: fault.kind, plugins: targets, startMs: fault.startMs, healMs: heal,
                toxics: fault.toxics ?? [], startDelayMs: fault.startDelayMs ?? 500, limits: fault.limits ?? .init())
        }
    }

    /// What is wrong with the experiment beyond its types, each with the field it is about (`faults[2].target`).
    public func problems(plugins: [String]) -> [(field: String, reason: String)] {
        var problems: [(String, String)] = []
        if durationMs <= 0 { problems.append(("durationMs", "must be positive")) }
        if load.rate <= 0 { problems.append(("load.rate", "must be positive")) }
        if let minimum = load.minimumRequests, minimum < 0 {
            problems.append(("load.minimumRequests", "must not be negative"))
        }
        if let clients = load.clients, !(1...64).contains(clients) {
            problems.append(("load.clients", "must be 1 to 64"))
        }
        if !plugins.contains(victimName) {
            problems.append(
                ("victim", "the app has no plugin '\(victimName)' (its plugins: \(plugins.joined(separator: ", ")))"))
        }
        if let defect, defect.wrongAnswerEvery < 1 {
            problems.append(("defect.wrongAnswerEvery", "must be at least 1"))
        }
        for (index, fault) in faults.enumerated() {
            let field = "faults[\(index)]"
            if fault.startMs < 0 { problems.append(("\(field).startMs", "must not be negative")) }
            if let duration = fault.durationMs, duration < 0 {
                problems.append(("\(field).durationMs", "must not be negative"))
            }
            if let delay = fault.startDelayMs, delay < 0 || fault.kind != .slowStart {
                problems.append(("\(field).startDelayMs", delay < 0 ? "must not be negative" : "is for slowStart only"))
            }
            var named: [String] = []
            if case .plugin(let name) = fault.target { named = [name] }
            if case .plugins(let names) = fault.target { named = names }
            for name in named where !plugins.contains(name) {
                problems.append(("\(field).target", "the app has no plugin '\(name)'"))
            }
            if fault.kind.isHostFault != (fault.target == .host) {
                problems.append(
                    (
                        "\(field).target",
                        fault.kind.isHostFault
                            ? "a \(fault.kind.rawValue) fault's target is the host: \"host\""
                            : "only hostKill and diskFull faults target the host"
                    ))
            }
            // One host fault at a time: a kill under a full disk restores a file the disk held back, and a disk
            // filled while the host is down has no host to fill.
            if fault.kind.isHostFault,
                let other = faults.indices.first(where: { other in
                    other < index && faults[other].kind.isHostFault && Self.overlap(faults[other], fault)
                })
            {
                problems.append(("\(field).startMs", "overlaps host fault faults[\(other)]: one host fault at a time"))
            }
            if fault.kind == .flood, named != [victimName] {
                problems.append(("\(field).target", "only the victim ('\(victimName)') can flood"))
            }
            if fault.kind == .pipes, (fault.toxics ?? []).isEmpty {
                problems.append(("\(field).toxics", "a pipes fault needs at least one toxic"))
            }
            if fault.kind == .limits, fault.limits?.isEmpty ?? true {
                problems.append(("\(field).limits", "a limits fault needs at least one limit"))
            }
            // The heartbeat's bound on a CPU limit is the host's to check, at injection, where the plugin is known.
            if let limits = fault.limits,
                let problem = PluginLimitsRequest.Params(plugin: "", limits).problem(
                    heartbeatTimeoutMs: 0)
            {
                problems.append(("\(field).limits.\(problem.field)", problem.reason))
            }
            for (position, toxic) in (fault.toxics ?? []).enumerated() {
                if let problem = toxic.problem {
                    problems.append(("\(field).toxics[\(position)].\(problem.field)", problem.reason))
                }
            }
        }
        return problems
    }

    /// Whether two host faults' windows (from the start to the healing step; a kill's is its start) meet.
    static func overlap(_ a: Fault, _ b: Fault) -> Bool {
        func window(_ fault: Fault) -> ClosedRange<Int> {
            let duration = fault.durationMs ?? (fault.kind == .diskFull ? 2_000 : 0)
            return fault.startMs...(fault.startMs + max(0, duration))
        }
        return window(a).overlaps(window(b))
    }

    /// The largest experiment file read: a hand-written schedule is a few KiB.
    public static let maxFileBytes = 1 << 20

    /// Reads an experiment file: JSON of the schema's shape; a mistake is reported as `file:line:column` with the
    /// field, as a manifest's are (``ManifestError``). `app` is made absolute (relative to the file's folder).
    public static func load(path: String) throws(ManifestError) -> ExperimentSpec {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readRegularFile(path, maxBytes: maxFileBytes) } catch {
            throw ManifestError(path: path, message: "cannot read the experiment (\(error))", kind: .unreadable)
        }
        let source = JSONSource(path: path, bytes: bytes)
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw ManifestError(
                kind: .invalid, [source.diagnostic("not valid JSON: \(error.reasonDescription)", at: error.offset)])
        }
        // A key the format lacks is a mistake (a typo would otherwise leave a fault out without a word).
        let unknown = unknownKeys(in: value).map { path, known in
            source.diagnostic(
                "unknown key '\(path.last?.description ?? "")' (known keys here: \(known.joined(separator: ", ")))",
                at: path, key: true)
        }
        guard unknown.isEmpty else { throw ManifestError(kind: .invalid, unknown) }
        var spec: ExperimentSpec
        do { spec = try Coding.decode(ExperimentSpec.self, from: value) } catch {
            throw ManifestError(kind: .invalid, [source.decodingDiagnostic(error)])
        }
        let absolute = path.hasPrefix("/") ? path : "\(FileSystem.currentDirectory)/\(path)"
        if !spec.app.hasPrefix("/") { spec.app = "\(FileSystem.parentDirectory(of: absolute))/\(spec.app)" }
        return spec
    }

    /// `problems(plugins:)` as diagnostics at their fields in the file at `path` (or about the file, for the
    /// quick form, which has none).
    public static func diagnose(
        _ problems: [(field: String, reason: String)], path: String?
    ) -> ManifestError? {
        guard !problems.isEmpty else { return nil }
        let bytes = path.flatMap { try? FileSystem.readRegularFile($0, maxBytes: maxFileBytes) } ?? []
        let source = JSONSource(path: path ?? "the experiment", bytes: bytes)
        return ManifestError(
            kind: .invalid,
            problems.map { problem in
                // A field that is missing (a toxic without `latencyMs`) is reported at the nearest thing that is there.
                var path = fieldPath(problem.field)
                while !path.isEmpty, JSONParser.locate(path, in: bytes) == nil { path.removeLast() }
                return source.diagnostic("'\(problem.field)': \(problem.reason)", at: path)
            })
    }
}

/// `faults[2].toxics[0].latencyMs` as a path into the document.
func fieldPath(_ field: String) -> [JSONPathComponent] {
    var path: [JSONPathComponent] = []
    for part in field.split(separator: ".") {
        let pieces = part.split(separator: "[")
        if let key = pieces.first, !part.hasPrefix("[") { path.append(.key(String(key))) }
        for piece in pieces.dropFirst() {
            if let index = Int(piece.dropLast()) { path.append(.index(index)) }
        }
    }
    return path
}

/// The keys of each object of the format (schema/experiment.schema.json), and every key of `value` outside them,
/// in document order.
func unknownKeys(in value: JSONValue) -> [(path: [JSONPathComponent], known: [String])] {
    let top = ["app", "victim", "seed", "durationMs", "load", "faults", "checkers", "requestDeadlineMs", "defect"]
    let fault = ["kind", "target", "startMs", "durationMs", "toxics", "startDelayMs", "limits"]
    let toxic = [
        "kind", "direction", "probability", "latencyMs", "jitterMs", "bytesPerSecond", "averageSize", "sizeVariation",
        "delayMs", "bytes",
    ]
    var found: [(path: [JSONPathComponent], known: [String])] = []
    func check(_ value: JSONValue?, _ known: [String], at path: [JSONPathComponent]) {
        guard case .object(let object)? = value else { return }
        for key in object.keys where !known.contains(key) { found.append((path + [.key(key)], known)) }
    }
    check(value, top, at: [])
    check(value["load"], ["rate", "clients", "mix", "minimumRequests"], at: [.key("load")])
    check(
        value["load"]?["mix"], ["links", "chains", "tabs", "actions", "dismissals", "signOuts"],
        at: [.key("load"), .key("mix")])
    check(value["defect"], ["wrongAnswerEvery", "phase"], at: [.key("defect")])
    for (index, item) in (value["faults"]?.arrayValue ?? []).enumerated() {
        check(item, fault, at: [.key("faults"), .index(index)])
        check(
            item["limits"], ["memoryBytes", "cpuPercent", "cpuPeriodMs", "descriptors"],
            at: [.key("faults"), .index(index), .key("limits")])
        for (position, entry) in (item["toxics"]?.arrayValue ?? []).enumerated() {
            check(entry, toxic, at: [.key("faults"), .index(index), .key("toxics"), .index(position)])
        }
    }
    return found
}
