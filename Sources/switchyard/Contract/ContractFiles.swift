import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// A contract file as read: its path, its bytes (to find the line and column of a pointer) and the contract.
struct ContractFile {
    let path: String
    let bytes: [UInt8]
    let contract: RouteContract

    /// Reads and checks a contract file; a missing file ends the CLI with status 66, a wrong one with 65 and
    /// `file:line:column: error: …`.
    static func read(_ path: String, hint: String? = nil) throws(RunFailure) -> ContractFile {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readRegularFile(path, maxBytes: RouteContract.maxFileBytes) } catch {
            let reason: String
            switch error.problem {
            case .notRegular(let kind): reason = "it is \(kind), not a regular file"
            case .tooLarge(let limit):
                reason = "it is larger than \(FileSystem.describeSize(limit)), the limit for a contract"
            case .system(let cause) where cause.isNotFound: reason = "no such file (\(cause.name))"
            case .system(let cause): reason = "cannot read it (\(cause))"
            }
            throw RunFailure(
                .noInput, message: "\(path): error: \(reason)" + (hint.map { "\n  \($0)" } ?? ""), formatted: true)
        }
        do {
            return ContractFile(path: path, bytes: bytes, contract: try RouteContract(parsing: bytes))
        } catch {
            let diagnostic = ManifestDiagnostic(
                path: path, message: "not a route contract (§19): \(error.description)", position: error.position)
            throw RunFailure(.dataError, message: diagnostic.description, formatted: true)
        }
    }

    /// Where `pointer` is in the file (its key, for a member), when the file has it.
    func position(of pointer: JSONPointer) -> TextPosition? {
        guard let found = JSONParser.locate(pointer.path, in: bytes) else { return nil }
        return TextPosition(offset: found.key ?? found.value, in: bytes)
    }

    /// The nearest member the file has on the way to `pointer` (a finding may name what one side lacks).
    func nearestPosition(of pointer: JSONPointer) -> TextPosition? {
        var tokens = pointer.tokens
        while true {
            if let position = position(of: JSONPointer(tokens)) { return position }
            guard !tokens.isEmpty else { return nil }
            tokens.removeLast()
        }
    }
}

extension ContractFinding {
    /// The finding as the CLI prints diagnostics: `file:line:column: severity: [RULE] /pointer: message`.
    func diagnostic(
        in file: ContractFile, severity: ManifestDiagnostic.Severity, note: String = ""
    ) -> ManifestDiagnostic {
        ManifestDiagnostic(
            path: file.path, severity: severity, message: "[\(rule.rawValue)] \(pointer): \(message)\(note)",
            position: file.nearestPosition(of: pointer))
    }
}

extension ManifestDiagnostic {
    /// The first line alone, `file:line:column: severity: message`, without the excerpt under it.
    var headline: String {
        guard let position else { return description }
        return "\(path):\(position.line):\(position.column): \(severity.rawValue): \(message)"
    }
}
