import SwitchyardProtocol

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
