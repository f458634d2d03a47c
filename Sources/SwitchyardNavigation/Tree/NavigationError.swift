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

    public static func notAllowed(
        _ instance: Instance?, _ reason: String, route: String? = nil, entry: EntryID? = nil
    ) -> ResponseError {
        let subject = instance.map { "\(describe($0)): " } ?? ""
        var data = context(instance, route: route)
        if let entry { data["entry"] = .int(entry.rawValue) }
        return ResponseError(.notAllowed, "\(subject)\(reason)", data: .object(data))
    }

    /// A plugin's refusal of a route (a guard, a bug, a timeout on the way) with the hop it refused added to its
    /// `data`: plugin, instance, type and route. The plugin's code, message and own members stay.
    func naming(_ question: RouteQuestion) -> ResponseError {
        naming(question.plugin, question.instance, question.type, route: question.route)
    }

    /// A plugin's refusal to create an instance, with the instance added (plugin, instance, type).
    func naming(_ question: CreateQuestion) -> ResponseError {
        naming(question.plugin, question.instance, question.type, route: nil)
    }

    private func naming(_ plugin: String, _ instance: InstanceID, _ type: String, route: String?) -> ResponseError {
        // What the plugin itself put in `data` wins: a handler failure's `type` is the exception's (§7), and the
        // step's coordinator type then travels as `coordinatorType`.
        var data = self.data?.objectValue ?? JSONObject()
        if data["plugin"] == nil { data["plugin"] = .string(plugin) }
        if data["instance"] == nil { data["instance"] = .int(instance.rawValue) }
        if data["type"] == nil {
            data["type"] = .string(type)
        } else if data["type"] != .string(type) {
            data["coordinatorType"] = .string(type)
        }
        if let route, data["route"] == nil { data["route"] = .string(route) }
        return ResponseError(code, message, data: .object(data))
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

    public static func invalidAnswer(
        _ plugin: String, _ reason: String, instance: Instance? = nil, route: String? = nil
    ) -> ResponseError {
        var data = context(instance, route: route)
        data["plugin"] = .string(plugin)
        return ResponseError(
            .invalidAnswer, "plugin '\(plugin)' answered inconsistently with its route table: \(reason)",
            data: .object(data))
    }

    /// A screen whose content the host refuses (§21): `invalidAnswer` naming the element's path in `data.field`, or
    /// `limitExceeded` with the limit, its value and the content's when the content is too large.
    public static func screenContent(
        _ problem: ScreenContentProblem, plugin: String, instance: Instance, route: String
    ) -> ResponseError {
        var data = context(instance, route: route)
        data["plugin"] = .string(plugin)
        data["field"] = .string(problem.field)
        guard let limit = problem.limit else {
            return ResponseError(
                .invalidAnswer,
                "plugin '\(plugin)' answered route '\(route)' of \(describe(instance)) with a screen it cannot show: \(problem)",
                data: .object(data))
        }
        data["limit"] = .string(limit.name)
        data["max"] = .int(Int64(limit.max))
        data["actual"] = .int(Int64(limit.actual))
        return ResponseError(
            .limitExceeded,
            "plugin '\(plugin)' answered route '\(route)' of \(describe(instance)) with a screen over a limit: \(problem.reason) (\(limit.name))",
            data: .object(data))
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

    /// Navigation into a placeholder (``Instance/isPending``): its plugin has not created it yet.
    public static func placeholder(_ instance: Instance) -> ResponseError {
        ResponseError(
            .pluginUnavailable,
            "plugin '\(instance.plugin)' is unavailable: \(describe(instance)) is a placeholder until the plugin serves and creates it",
            data: .object(context(instance)))
    }

    public static func invalidSnapshot(_ reason: String) -> ResponseError {
        ResponseError(.invalidParams, "invalid tree snapshot: \(reason)")
    }
}
