public import SwitchyardProtocol

/// Navigation failures are wire errors from the start: a code (route not found, not allowed, not owner...), a
/// sentence naming the instance and the route, and that context in `data`.
public typealias NavigationError = ResponseError

extension ResponseError {
    static func context(_ instance: Instance?, route: String? = nil) -> JSONObject {
        var data = JSONObject()
        if let instance {
            data["instance"] = .int(instance.id.rawValue)
            data["plugin"] = .string(instance.plugin)
            data["type"] = .string(instance.type)
        }
        if let route { data["route"] = .string(route) }
        return data
    }

    static func describe(_ instance: Instance) -> String { "\(instance.plugin).\(instance.type)\(instance.id)" }

    public static func instanceNotFound(_ id: InstanceID) -> ResponseError {
        ResponseError(.instanceNotFound, "no coordinator instance \(id)", data: ["instance": .int(id.rawValue)])
    }

    public static func entryNotFound(_ instance: Instance, _ entry: EntryID) -> ResponseError {
        var data = context(instance)
        data["entry"] = .int(entry.rawValue)
        return ResponseError(.instanceNotFound, "\(describe(instance)) has no entry \(entry)", data: .object(data))
    }

    public static func routeNotFound(_ instance: Instance, _ route: String, _ detail: String? = nil) -> ResponseError {
        ResponseError(
            .routeNotFound, "\(describe(instance)) has no route '\(route)'\(detail.map { ": \($0)" } ?? "")",
            data: .object(context(instance, route: route)))
    }

    public static func notAllowed(_ instance: Instance?, _ reason: String, route: String? = nil) -> ResponseError {
        let subject = instance.map { "\(describe($0)): " } ?? ""
        return ResponseError(.notAllowed, "\(subject)\(reason)", data: .object(context(instance, route: route)))
    }

    public static func notOwner(_ requester: String, _ instance: Instance, _ operation: String) -> ResponseError {
        var data = context(instance)
        data["requester"] = .string(requester)
        data["operation"] = .string(operation)
        return ResponseError(
            .notOwner,
            "plugin '\(requester)' may not \(operation) on \(describe(instance)), which belongs to plugin '\(instance.plugin)'",
            data: .object(data))
    }

    public static func invalidAnswer(_ plugin: String, _ reason: String, instance: Instance? = nil, route: String? = nil) -> ResponseError {
        var data = context(instance, route: route)
        data["plugin"] = .string(plugin)
        return ResponseError(.invalidAnswer, "plugin '\(plugin)' answered inconsistently with its route table: \(reason)", data: .object(data))
    }

    public static func invalidRouteParams(_ instance: Instance, _ route: String, _ reason: String) -> ResponseError {
        var data = context(instance, route: route)
        data["field"] = "params"
        return ResponseError(.invalidParams, "\(describe(instance)) route '\(route)': \(reason)", data: .object(data))
    }

    public static func deepLinkInvalid(_ url: String, segment: String?, index: Int, _ reason: String) -> ResponseError {
        var data: JSONObject = ["url": .string(url), "index": .int(Int64(index))]
        if let segment { data["segment"] = .string(segment) }
        let at = segment.map { "segment \(index) '\($0)'" } ?? "after the last segment"
        return ResponseError(.deepLinkInvalid, "deep link \(url) is invalid at \(at): \(reason)", data: .object(data))
    }

    public static func invalidSnapshot(_ reason: String) -> ResponseError {
        ResponseError(.invalidParams, "invalid tree snapshot: \(reason)")
    }
}
