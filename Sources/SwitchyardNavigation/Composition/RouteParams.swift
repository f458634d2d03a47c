public import SwitchyardProtocol

/// Why `params` do not fit a route's declared parameters, or nil when they do (absent declarations accept anything).
func routeParamsProblem(_ params: JSONValue?, _ declared: [ParamDeclaration]?) -> String? {
    guard let declared else { return nil }
    let object: JSONObject
    switch params {
    case nil, .null?: object = JSONObject()
    case .object(let value)?: object = value
    case let other?: return "params must be an object with \(declared.map(\.name)), not a \(other.kindName)"
    }
    for parameter in declared {
        guard let value = object[parameter.name], value != .null else {
            if parameter.isRequired { return "missing required param '\(parameter.name)'" }
            continue
        }
        guard value.matches(parameter.type) else {
            return "param '\(parameter.name)' must be \(parameter.type.rawValue), found \(value.kindName)"
        }
    }
    for key in object.keys where !declared.contains(where: { $0.name == key }) {
        return "unknown param '\(key)' (declared: \(declared.map(\.name)))"
    }
    return nil
}

extension JSONValue {
    func matches(_ type: ParamType) -> Bool {
        switch (type, self) {
        case (.any, _): true
        case (.string, .string), (.boolean, .bool), (.object, .object), (.array, .array): true
        case (.integer, .int): true
        case (.integer, .double(let number)): number.rounded() == number
        case (.number, .int), (.number, .double): true
        default: false
        }
    }
}

/// Whether params declared on one side can be taken by a declaration on the other: what a route passes to the
/// coordinator it opens against what that type is created with (§14), and one version of a declaration against the
/// next (§19). One definition, so composition and the contract rules cannot disagree about what "compatible" means.
public enum ParamCompatibility {
    /// One param that does not fit, and why.
    public struct Mismatch: Sendable, Equatable {
        /// The param's name.
        public let param: String
        /// Why it does not fit.
        public let reason: String
    }

    /// Whether a value declared as `passed` is always a valid `accepted`: the same type, any value for `any`, and an
    /// integer for a `number`.
    public static func fits(_ passed: ParamType, _ accepted: ParamType) -> Bool {
        passed == accepted || accepted == .any || (passed == .integer && accepted == .number)
    }

    /// Why params declared by an opener (`passed`) do not fit those `target` declares (`accepted`), param by param;
    /// empty when they fit or when either side declares nothing (undeclared params are not checked, as at run time
    /// absent declarations accept anything).
    public static func mismatches(
        passed: [ParamDeclaration]?, accepted: [ParamDeclaration]?, target: String
    ) -> [Mismatch] {
        guard let passed, let accepted else { return [] }
        var found: [Mismatch] = []
        for parameter in accepted where parameter.isRequired {
            guard let given = passed.first(where: { $0.name == parameter.name }) else {
                found.append(
                    Mismatch(
                        param: parameter.name,
                        reason:
                            "\(target) requires param '\(parameter.name)', which the route does not pass (targetParams)"
                    ))
                continue
            }
            if !given.isRequired {
                found.append(
                    Mismatch(
                        param: parameter.name,
                        reason:
                            "\(target) requires param '\(parameter.name)', which the route passes only sometimes (required: false in targetParams)"
                    ))
            }
        }
        for given in passed {
            guard let parameter = accepted.first(where: { $0.name == given.name }) else {
                let declared =
                    accepted.isEmpty
                    ? "declares no params" : "declares only \(accepted.map { "'\($0.name)'" }.joined(separator: ", "))"
                found.append(
                    Mismatch(
                        param: given.name, reason: "the route passes param '\(given.name)', but \(target) \(declared)"))
                continue
            }
            if !fits(given.type, parameter.type) {
                found.append(
                    Mismatch(
                        param: given.name,
                        reason:
                            "the route passes param '\(given.name)' as \(given.type.rawValue), but \(target) takes it as \(parameter.type.rawValue)"
                    ))
            }
        }
        return found
    }
}
