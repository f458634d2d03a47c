public import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// One finding about a manifest, printed in the compiler's format — `file:line:column: error: message`, then the
/// line and a caret under the spot — which editors and terminals turn into a link to the place.
public struct ManifestDiagnostic: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        case error, warning, note
    }

    public let path: String
    public let severity: Severity
    public let message: String
    /// Where in the file; nil when the finding is about the file as a whole.
    public let position: TextPosition?

    public init(path: String, severity: Severity = .error, message: String, position: TextPosition? = nil) {
        self.path = path
        self.severity = severity
        self.message = message
        self.position = position
    }

    public var description: String {
        guard let position else { return "\(path): \(severity.rawValue): \(message)" }
        return "\(path):\(position.line):\(position.column): \(severity.rawValue): \(message)\n\(position.excerpt)"
    }
}

/// Why a manifest was refused: every finding, each with its file, line and column where there is one.
public struct ManifestError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// The file could not be read: missing, not a regular file, not permitted (sysexits' NOINPUT).
        case unreadable
        /// The file was read and is wrong (sysexits' DATAERR).
        case invalid
    }

    public let kind: Kind
    /// The file the first error is in.
    public let path: String
    /// The first error's message.
    public let message: String
    /// The errors, with their notes, in the order found.
    public let diagnostics: [ManifestDiagnostic]

    /// An error about a file (or, for a plugin that cannot be resolved, a thing) as a whole.
    public init(path: String, message: String, kind: Kind = .invalid) {
        self.init(kind: kind, [ManifestDiagnostic(path: path, message: message)])
    }

    /// An error with every finding, the first one naming it.
    public init(kind: Kind, _ diagnostics: [ManifestDiagnostic]) {
        self.kind = kind
        self.diagnostics = diagnostics
        path = diagnostics.first?.path ?? ""
        message = diagnostics.first?.message ?? ""
    }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

extension Manifest {
    /// The largest manifest read (Protocol/README.md §17): a hand-written list of plugins is a few KiB.
    public static let maxManifestBytes = 4 << 20

    /// Reads and validates a manifest file (a regular file of at most ``maxManifestBytes``, each `extends` too).
    ///
    /// A key the manifest format does not have is an error naming the nearest known key (a typo such as `"rot"`
    /// would otherwise leave an app without a root and no word why); with `allowUnknownKeys` (a manifest written
    /// for a newer version) it is a warning in ``warnings`` instead.
    public static func load(path: String, allowUnknownKeys: Bool = false) throws(ManifestError) -> Manifest {
        try load(path: path, allowUnknownKeys: allowUnknownKeys, depth: 0)
    }

    private static func load(path: String, allowUnknownKeys: Bool, depth: Int) throws(ManifestError) -> Manifest {
        guard depth < 8 else {
            throw ManifestError(path: path, message: "'extends' nests more than 8 manifests deep (a cycle?)")
        }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readRegularFile(path, maxBytes: maxManifestBytes) } catch {
            switch error.problem {
            case .notRegular(let kind):
                throw ManifestError(
                    path: path, message: "the manifest is \(kind), not a regular file; a manifest must be a JSON file",
                    kind: .unreadable)
            case .tooLarge(let limit):
                throw ManifestError(
                    path: path,
                    message: "the manifest is larger than \(FileSystem.describeSize(limit)), the limit for a manifest")
            case .system(let cause) where cause.isNotFound:
                throw ManifestError(path: path, message: "no such manifest (\(cause.name))", kind: .unreadable)
            case .system(let cause):
                throw ManifestError(path: path, message: "cannot read the manifest (\(cause))", kind: .unreadable)
            }
        }
        let source = JSONSource(path: path, bytes: bytes)
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw ManifestError(
                kind: .invalid, [source.diagnostic("not valid JSON: \(error.reasonDescription)", at: error.offset)])
        }
        var errors: [ManifestDiagnostic] = []
        var warnings: [ManifestDiagnostic] = []
        // In the order of the file, as a reader goes through it.
        let unknownKeys = ManifestSchema.unknownKeys(in: value).sorted { a, b in
            (JSONParser.locate(a.path, in: bytes)?.key ?? 0) < (JSONParser.locate(b.path, in: bytes)?.key ?? 0)
        }
        for unknown in unknownKeys {
            let suggestion = ManifestSchema.nearest(to: unknown.key, in: unknown.known).map {
                "; did you mean '\($0)'?"
            }
            if allowUnknownKeys {
                warnings.append(
                    source.diagnostic(
                        "unknown key '\(unknown.key)' in \(unknown.context) ignored (--allow-unknown-keys)\(suggestion ?? "")",
                        severity: .warning, at: unknown.path, key: true))
            } else {
                let hint =
                    suggestion
                    ?? " (known keys: \(unknown.known.joined(separator: ", ")); --allow-unknown-keys ignores keys this version does not know)"
                errors.append(
                    source.diagnostic(
                        "unknown key '\(unknown.key)' in \(unknown.context)\(hint)", at: unknown.path, key: true))
            }
        }
        var decoded: Manifest?
        do { decoded = try Coding.decode(Manifest.self, from: value) } catch {
            errors.append(source.decodingDiagnostic(error))
        }
        if let decoded { errors += decoded.problems(in: source) }
        guard errors.isEmpty, var manifest = decoded else { throw ManifestError(kind: .invalid, errors) }

        let absolute = path.hasPrefix("/") ? path : "\(FileSystem.currentDirectory)/\(path)"
        let directory = FileSystem.parentDirectory(of: absolute)
        manifest.directory = directory
        manifest.path = absolute
        manifest.warnings = warnings
        for index in manifest.plugins.indices {
            manifest.plugins[index].directory = directory
            // The program's name (the command's first word), or the product.
            let field: [JSONPathComponent] =
                manifest.plugins[index].command != nil ? [.key("command"), .index(0)] : [.key("product")]
            if let found = JSONParser.locate([.key("plugins"), .index(index)] + field, in: bytes) {
                let position = TextPosition(offset: found.value, in: bytes)
                manifest.plugins[index].commandLocation = "\(path):\(position.line):\(position.column)"
            }
        }
        if let extends = manifest.extends {
            let basePath = extends.hasPrefix("/") ? extends : "\(directory)/\(extends)"
            let base: Manifest
            do { base = try load(path: basePath, allowUnknownKeys: allowUnknownKeys, depth: depth + 1) } catch {
                guard error.kind == .unreadable else { throw error }
                // The mistake is in this file's `extends`, so that is where the error points.
                throw ManifestError(
                    kind: .unreadable,
                    [
                        source.diagnostic(
                            "'extends' names \(basePath), which cannot be read: \(error.message)", at: [.key("extends")]
                        )
                    ])
            }
            manifest = manifest.merged(over: base)
        }
        if depth == 0, let root = manifest.root, let plugin = root.plugin,
            !manifest.plugins.contains(where: { $0.name == plugin })
        {
            let names = manifest.plugins.map(\.name)
            let hint =
                ManifestSchema.nearest(to: plugin, in: names).map { "; did you mean '\($0)'?" }
                ?? " (its plugins: \(names.joined(separator: ", ")))"
            throw ManifestError(
                kind: .invalid,
                [
                    source.diagnostic(
                        "the root names plugin '\(plugin)', which the manifest does not declare\(hint)",
                        at: [.key("root"), .key("plugin")])
                ])
        }
        return manifest
    }

    /// This manifest's fields over `base`'s.
    func merged(over base: Manifest) -> Manifest {
        var plugins = base.plugins
        for plugin in self.plugins {
            if let index = plugins.firstIndex(where: { $0.name == plugin.name }) {
                plugins[index] = plugin
            } else {
                plugins.append(plugin)
            }
        }
        var merged = Manifest(
            app: app ?? base.app, root: root ?? base.root, strict: strict ?? base.strict, plugins: plugins,
            directory: directory)
        merged.extends = extends
        merged.deepLinks = deepLinks ?? base.deepLinks
        merged.path = path
        merged.warnings = base.warnings + warnings
        return merged
    }

    /// What is wrong with this file's own fields (an inherited plugin was checked in its own file).
    private func problems(in source: JSONSource) -> [ManifestDiagnostic] {
        var problems: [ManifestDiagnostic] = []
        if let app,
            app.isEmpty || !app.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) || app.hasPrefix(".")
        {
            problems.append(
                source.diagnostic(
                    "app name '\(app)' must be letters, digits, '.', - or _ (it names the control socket)",
                    at: [.key("app")]))
        }
        if let deferMs = deepLinks?.deferMs, !(1...DeepLinkOptions.maxDeferMs).contains(deferMs) {
            problems.append(
                source.diagnostic(
                    "'deepLinks.deferMs' is \(deferMs): a deferred link waits 1 to \(DeepLinkOptions.maxDeferMs) ms",
                    at: [.key("deepLinks"), .key("deferMs")]))
        }
        var firstUse: [String: Int] = [:]
        for (index, plugin) in plugins.enumerated() {
            let entry: [JSONPathComponent] = [.key("plugins"), .index(index)]
            guard !plugin.name.isEmpty, plugin.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            else {
                problems.append(
                    source.diagnostic(
                        "plugin name '\(plugin.name)' must be letters, digits, - or _", at: entry + [.key("name")]))
                continue
            }
            if let first = firstUse[plugin.name] {
                problems.append(
                    source.diagnostic(
                        "plugin name '\(plugin.name)' is used twice (a manifest that 'extends' another replaces a plugin by naming it once)",
                        at: entry + [.key("name")]))
                problems.append(
                    source.diagnostic(
                        "'\(plugin.name)' is first used here", severity: .note,
                        at: [.key("plugins"), .index(first), .key("name")]))
                continue
            }
            firstUse[plugin.name] = index
            switch (plugin.product, plugin.command) {
            case (.some, .some):
                problems.append(
                    source.diagnostic(
                        "plugin '\(plugin.name)' has both 'product' and 'command'; give one",
                        at: entry + [.key("command")], key: true))
            case (nil, nil):
                problems.append(
                    source.diagnostic(
                        "plugin '\(plugin.name)' needs 'product' (a Swift executable of this package) or 'command' (an argv)",
                        at: entry))
            case (nil, .some(let command)) where command.isEmpty:
                problems.append(
                    source.diagnostic("plugin '\(plugin.name)' has an empty 'command'", at: entry + [.key("command")]))
            default: break
            }
            for (key, value) in [
                ("hibernateAfterMs", plugin.hibernateAfterMs),
                ("maxHibernatedStateBytes", plugin.maxHibernatedStateBytes),
            ] {
                guard let value, value <= 0 else { continue }
                problems.append(
                    source.diagnostic(
                        "plugin '\(plugin.name)': '\(key)' must be a positive number, not \(value)",
                        at: entry + [.key(key)]))
            }
            if let contract = plugin.contract, contract.isEmpty || contract.hasSuffix("/") {
                problems.append(
                    source.diagnostic(
                        "plugin '\(plugin.name)': 'contract' names a file (its route contract, e.g. \"contracts/\(plugin.name).json\"), not '\(contract)'",
                        at: entry + [.key("contract")]))
            }
        }
        return problems
    }
}

/// A JSON file's text (a manifest, an experiment), to turn a field's path or a byte offset into a diagnostic with a
/// line and column.
public struct JSONSource: Sendable {
    let path: String
    let bytes: [UInt8]

    /// The file at `path` as read.
    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    /// At a byte offset (a parse error's).
    public func diagnostic(
        _ message: String, severity: ManifestDiagnostic.Severity = .error, at offset: Int
    ) -> ManifestDiagnostic {
        ManifestDiagnostic(
            path: path, severity: severity, message: message, position: TextPosition(offset: offset, in: bytes))
    }

    /// At the value of `field` (or its key); at the file as a whole if the field cannot be found.
    public func diagnostic(
        _ message: String, severity: ManifestDiagnostic.Severity = .error, at field: [JSONPathComponent],
        key: Bool = false
    ) -> ManifestDiagnostic {
        guard let found = JSONParser.locate(field, in: bytes) else {
            return ManifestDiagnostic(path: path, severity: severity, message: message)
        }
        return diagnostic(message, severity: severity, at: key ? found.key ?? found.value : found.value)
    }

    /// A field of the wrong type or a missing one, at the value (or, when missing, at the object that lacks it).
    public func decodingDiagnostic(_ error: any Error) -> ManifestDiagnostic {
        let (field, reason) = describeDecodingError(error)
        var message = field.map { reason.contains("'\($0)'") ? reason : "'\($0)': \(reason)" } ?? reason
        if let field, field.hasSuffix(".command") || field.hasSuffix(".args"), reason.hasPrefix("expected an array") {
            message += " (an argv, one string per argument: [\"python3\", \"plugin.py\"]; never run through a shell)"
        }
        guard let decoding = error as? DecodingError else { return ManifestDiagnostic(path: path, message: message) }
        switch decoding {
        case .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .dataCorrupted(let context):
            return diagnostic(message, at: JSONPathComponent.path(context.codingPath))
        @unknown default:
            return ManifestDiagnostic(path: path, message: message)
        }
    }
}

/// The keys each object of the manifest format has, for the unknown-key check (the coding keys themselves, so
/// the check cannot drift from what is decoded).
enum ManifestSchema {
    struct Unknown {
        let key: String
        let path: [JSONPathComponent]
        let known: [String]
        /// Where, for the message: "the manifest", "plugins[1] ('profile')", "plugins[1].restart".
        let context: String
    }

    static let manifest = Manifest.CodingKeys.allCases.map(\.rawValue)
    static let plugin = PluginManifest.CodingKeys.allCases.map(\.rawValue)
    static let limits = LimitOverrides.CodingKeys.allCases.map(\.rawValue)
    static let restart = RestartPolicy.CodingKeys.allCases.map(\.rawValue)
    static let deepLinks = DeepLinkOptions.CodingKeys.allCases.map(\.rawValue)
    /// `CoordinatorReference`'s fields (a protocol type, decoded the same way).
    static let reference = ["plugin", "type"]

    /// Every key the format does not have, in document order. A value of the wrong type is the decoder's to
    /// report, so it is not looked into here.
    static func unknownKeys(in manifest: JSONValue) -> [Unknown] {
        guard case .object(let top) = manifest else { return [] }
        var found = check(top, known: Self.manifest, at: [], context: "the manifest")
        if case .object(let root)? = top["root"] {
            found += check(root, known: reference, at: [.key("root")], context: "root")
        }
        if case .object(let links)? = top["deepLinks"] {
            found += check(links, known: deepLinks, at: [.key("deepLinks")], context: "deepLinks")
        }
        if case .array(let plugins)? = top["plugins"] {
            for (index, entry) in plugins.enumerated() {
                guard case .object(let plugin) = entry else { continue }
                let path: [JSONPathComponent] = [.key("plugins"), .index(index)]
                let name = plugin["name"]?.stringValue.map { " ('\($0)')" } ?? ""
                found += check(plugin, known: Self.plugin, at: path, context: "plugins[\(index)]\(name)")
                for (field, known) in [("limits", limits), ("restart", restart)] {
                    guard case .object(let nested)? = plugin[field] else { continue }
                    found += check(
                        nested, known: known, at: path + [.key(field)], context: "plugins[\(index)].\(field)\(name)")
                }
            }
        }
        return found
    }

    private static func check(
        _ object: JSONObject, known: [String], at path: [JSONPathComponent], context: String
    ) -> [Unknown] {
        object.keys.filter { !known.contains($0) }.map {
            Unknown(key: $0, path: path + [.key($0)], known: known, context: context)
        }
    }

    /// The known key a typo most likely meant: the closest by edits (a swap of two letters counts as one),
    /// ignoring case, and only when close enough to be a typo rather than another word.
    static func nearest(to key: String, in known: [String]) -> String? {
        let typed = Array(key.lowercased())
        let scored = known.map { candidate in (candidate, editDistance(typed, Array(candidate.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(1, min(3, typed.count / 3)) ? best.0 : nil
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
