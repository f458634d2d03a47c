public import SwitchyardProtocol

/// Why a screen's content cannot be shown: the element's path (`content[1].sections[0].rows[2].action.name`) and the
/// reason, or the size limit it exceeds.
public struct ScreenContentProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// A limit of §21 that the content exceeds: its name, its value and the content's.
    public struct Limit: Sendable, Equatable {
        public let name: String
        public let max: Int
        public let actual: Int
    }

    /// The path of the member at fault, from the screen: `content[0].text`, `content[2].action.inputs[1]`.
    public let field: String
    /// What is wrong there, as a sentence fragment.
    public let reason: String
    /// Set when the content is too large rather than malformed.
    public let limit: Limit?

    public var description: String { "\(field): \(reason)" }
}

/// Checks a screen's `content` against the vocabulary of Protocol/README.md §21 and against the route that shows it:
/// the host's check of a plugin's answer (`invalidAnswer` or `limitExceeded` naming the element), shared with
/// `check-plugin` through the chain. Pure, and linear in the content's size.
public enum ScreenContentCheck {
    /// The first problem of `screen`'s content, or nil when it can be shown. A screen without content has none.
    public static func problem(in screen: ScreenDescriptor, route: RouteDeclaration) -> ScreenContentProblem? {
        guard let content = screen.content else { return nil }
        var walker = ScreenContentWalker()
        do throws(ScreenContentProblem) {
            try walker.walk(content)
            let bytes = JSONWriter.encode(content).count
            if bytes > ScreenVocabulary.maxContentBytes {
                throw ScreenContentProblem(
                    field: "content",
                    reason: "\(bytes) bytes of content exceed the limit of \(ScreenVocabulary.maxContentBytes)",
                    limit: .init(name: "maxScreenContentBytes", max: ScreenVocabulary.maxContentBytes, actual: bytes))
            }
            for reference in walker.actions { try check(reference, route: route, inputs: walker.inputs) }
        } catch {
            return error
        }
        return nil
    }

    /// An action reference against the route's declared actions and the screen's inputs: the action exists, every
    /// input it sends is on the screen, and what it sends (fixed values and input values) fits the action's params.
    private static func check(
        _ reference: ScreenContentWalker.ActionReference, route: RouteDeclaration,
        inputs: [String: (type: ParamType, field: String)]
    ) throws(ScreenContentProblem) {
        let field = reference.field
        guard let action = route.action(named: reference.name) else {
            let declared = route.actions?.map { "'\($0.name)'" }.joined(separator: ", ") ?? ""
            throw ScreenContentProblem(
                field: field + ".name",
                reason:
                    "route '\(route.name)' declares no action '\(reference.name)' (\(declared.isEmpty ? "it declares none" : "declared: \(declared)"))",
                limit: nil)
        }
        var sent: [String: ParamType] = [:]
        for (index, input) in reference.inputs.enumerated() {
            guard let declared = inputs[input] else {
                throw ScreenContentProblem(
                    field: "\(field).inputs[\(index)]", reason: "no input of the screen has the id '\(input)'",
                    limit: nil)
            }
            if reference.params[input] != nil {
                throw ScreenContentProblem(
                    field: "\(field).inputs[\(index)]",
                    reason: "'\(input)' is both a fixed param and an input of action '\(action.name)'", limit: nil)
            }
            sent[input] = declared.type
        }
        guard let parameters = action.params else { return }
        for (name, value) in reference.params.sorted(by: { $0.0 < $1.0 }) {
            guard let parameter = parameters.first(where: { $0.name == name }) else {
                throw ScreenContentProblem(
                    field: "\(field).params.\(name)",
                    reason: "action '\(action.name)' declares no param '\(name)' (declared: \(parameters.map(\.name)))",
                    limit: nil)
            }
            guard value.matches(parameter.type) || (value == .null && !parameter.isRequired) else {
                throw ScreenContentProblem(
                    field: "\(field).params.\(name)",
                    reason:
                        "param '\(name)' of action '\(action.name)' must be \(parameter.type.rawValue), found \(value.kindName)",
                    limit: nil)
            }
        }
        for (index, input) in reference.inputs.enumerated() {
            guard let type = sent[input] else { continue }
            guard let parameter = parameters.first(where: { $0.name == input }) else {
                throw ScreenContentProblem(
                    field: "\(field).inputs[\(index)]",
                    reason:
                        "action '\(action.name)' declares no param '\(input)' (declared: \(parameters.map(\.name)))",
                    limit: nil)
            }
            guard ParamCompatibility.fits(type, parameter.type) else {
                throw ScreenContentProblem(
                    field: "\(field).inputs[\(index)]",
                    reason:
                        "input '\(input)' sends a \(type.rawValue), but action '\(action.name)' takes param '\(input)' as \(parameter.type.rawValue)",
                    limit: nil)
            }
        }
        for parameter in parameters where parameter.isRequired {
            let fixed = reference.params[parameter.name].map { $0 != .null } ?? false
            guard fixed || sent[parameter.name] != nil else {
                throw ScreenContentProblem(
                    field: field,
                    reason:
                        "action '\(action.name)' requires param '\(parameter.name)', which this element sends neither as a fixed param nor from an input",
                    limit: nil)
            }
        }
    }
}
