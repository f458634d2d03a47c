public import SwitchyardProtocol

/// A screen's action checked against the route tables (Protocol/README.md §12.6): whom to ask, and what.
public struct ActionQuestion: Sendable, Equatable {
    /// The plugin owning the entry: the one that decides.
    public let plugin: String
    public let request: CoordinatorActionRequest.Params
}

extension NavigationTree {
    /// Checks a `user/action` before its owner hears of it: the instance and the entry exist, and the entry's route
    /// declares the action with params that fit. Nothing is sent for an action that fails here.
    ///
    /// An undeclared action is `-32602 invalidParams` with `field: "action"` (like a param of the wrong value: the
    /// entry exists, the action is what is wrong), params that do not fit are `-32602` with `field: "params"`; an
    /// unknown instance or entry is `-32015 instanceNotFound`; a placeholder or a plugin whose table is unknown is
    /// `-32003 pluginUnavailable`.
    public func actionQuestion(
        _ params: UserActionRequest.Params, registry: RouteRegistry
    ) throws(ResponseError) -> ActionQuestion {
        guard let instance = self[params.instance] else { throw .instanceNotFound(params.instance) }
        guard !instance.isPending else { throw .placeholder(instance) }
        guard let entry = instance.entry(params.entry) else { throw .entryNotFound(instance, params.entry) }
        guard let declaration = registry.declaration(of: instance) else {
            throw .pluginUnavailable(instance.plugin, "its route table is not available")
        }
        var data = ResponseError.context(instance, route: entry.route)
        data["entry"] = .int(entry.id.rawValue)
        data["action"] = .string(params.action)
        let route = declaration.route(named: entry.route)
        guard let action = route?.action(named: params.action) else {
            let declared = route?.actions?.map { "'\($0.name)'" }.joined(separator: ", ") ?? ""
            data["field"] = "action"
            throw ResponseError(
                .invalidParams,
                "\(ResponseError.describe(instance)) entry \(entry.id) (route '\(entry.route)') declares no action '\(params.action)' (\(declared.isEmpty ? "it declares none" : "declared: \(declared)"))",
                data: .object(data))
        }
        if let reason = routeParamsProblem(params.params, action.params) {
            data["field"] = "params"
            throw ResponseError(
                .invalidParams,
                "\(ResponseError.describe(instance)) route '\(entry.route)', action '\(action.name)': \(reason)",
                data: .object(data))
        }
        return ActionQuestion(
            plugin: instance.plugin,
            request: .init(
                instance: instance.id, entry: entry.id, route: entry.route, action: action.name, params: params.params))
    }
}
