import SwitchyardNavigation
import SwitchyardProtocol

/// The host's side of the navigation, for one plugin on its own: the real chain runner and deep-link resolver over
/// the plugin's route table, so every answer is judged exactly as the host judges it (§8: content that fits the
/// declaration, tabs in order, a root route for a stack...).
///
/// Types the plugin targets in other plugins get stand-ins: a one-screen stack the checker answers for itself, so a
/// route that opens another plugin's coordinator can be checked without that plugin.
struct HostModel {
    let plugin: String
    let coordinators: [CoordinatorDeclaration]
    private(set) var registry: RouteRegistry
    let allocator = IDAllocator()
    /// The types of other plugins this plugin's routes open.
    let foreignTargets: [RouteRegistry.TypeKey]

    static let standInRoute = "standIn"

    init(plugin: String, coordinators: [CoordinatorDeclaration]) {
        self.plugin = plugin
        self.coordinators = coordinators
        var registry = RouteRegistry()
        registry.add(plugin: plugin, coordinators: coordinators)
        var foreign: [RouteRegistry.TypeKey] = []
        for coordinator in coordinators {
            for route in coordinator.routes {
                guard let target = RouteRegistry.target(of: route, declaredBy: plugin), target.plugin != plugin,
                    !foreign.contains(target)
                else { continue }
                foreign.append(target)
            }
        }
        for target in foreign {
            registry.add(
                plugin: target.plugin,
                coordinators: [
                    CoordinatorDeclaration(
                        type: target.type, kind: .stack, initialRoute: Self.standInRoute,
                        routes: [RouteDeclaration(name: Self.standInRoute, transition: .root)])
                ])
        }
        self.registry = registry
        foreignTargets = foreign
    }

    /// A stand-in's answer to its own `coordinator/create`.
    static var standInContent: CoordinatorCreateRequest.Result {
        .init(root: .init(route: standInRoute, content: .screen(ScreenDescriptor(name: "StandIn"))))
    }
}

/// How a chain ended, with what the plugin last said (to tell its own refusal from the host's verdict on an answer).
enum ChainRun {
    case done(ChainResult)
    /// The plugin answered with an error (a guard's -32013, -32602...): the chain failed on the plugin's word.
    case refused(ResponseError, method: String, created: [(instance: InstanceID, plugin: String, type: String)])
    /// The host would refuse the answer (-32006 invalidAnswer, a result that does not decode...).
    case invalidAnswer(ResponseError, method: String, created: [(instance: InstanceID, plugin: String, type: String)])
    /// No usable answer at all (timeout, the process ended).
    case noAnswer(Reply, method: String)
}

extension PluginSession {
    /// Drives `runner` to its end: asks the plugin each question, answers stand-ins' questions itself, and measures
    /// each `coordinator/route` round trip (for the ping and timing checks).
    func drive(_ runner: ChainRunner, model: HostModel, timings: inout [RouteTiming]) -> ChainRun {
        var lastError: (error: ResponseError, method: String)?
        var lastMethod = CoordinatorCreateRequest.method
        while true {
            switch runner.advance() {
            case .done(let result):
                return .done(result)
            case .failed(let failure):
                // The runner passes a plugin's refusal on with the step named in its data (§12): the same code and
                // message is the plugin's own word.
                if let lastError, lastError.error.code == failure.error.code,
                    lastError.error.message == failure.error.message
                {
                    return .refused(failure.error, method: lastError.method, created: failure.created)
                }
                return .invalidAnswer(failure.error, method: lastMethod, created: failure.created)
            case .needs(let need):
                lastError = nil
                let answer: Result<ChainAnswer, AnswerProblem>
                switch need {
                case .create(let question) where question.plugin != model.plugin:
                    answer = .success(.create(.success(HostModel.standInContent)))
                case .create(let question):
                    lastMethod = CoordinatorCreateRequest.method
                    answer = ask(lastMethod, question.request, as: CoordinatorCreateRequest.Result.self).map {
                        .create(.success($0))
                    }
                case .route(let question):
                    lastMethod = CoordinatorRouteRequest.method
                    let start = ContinuousClock.now
                    let oversizeBefore = oversizeLineCount
                    answer = ask(lastMethod, question.request, as: CoordinatorRouteRequest.Result.self).map {
                        .route(.success($0))
                    }
                    let oversize = oversizeLineCount > oversizeBefore
                    timings.append(
                        RouteTiming(
                            question: question, elapsed: ContinuousClock.now - start, wroteOversizeLine: oversize))
                }
                switch answer {
                case .success(let answer): runner.resume(with: answer)
                case .failure(.plugin(let error)):
                    lastError = (error, lastMethod)
                    runner.resume(with: Self.failed(need, error))
                case .failure(.host(let error)): runner.resume(with: Self.failed(need, error))
                case .failure(.none(let reply)): return .noAnswer(reply, method: lastMethod)
                }
            }
        }
    }

    /// Sends one of the host's questions and takes the answer as the host does.
    private func ask<T: Decodable>(
        _ method: String, _ params: some Encodable, as type: T.Type
    ) -> Result<T, AnswerProblem> {
        guard let encoded = try? Coding.encode(params) else { return .failure(.none(.ended)) }
        return decode(request(method, encoded), as: type, method: method)
    }

    /// The chain's view of an error answer to `need`.
    private static func failed(_ need: ChainNeed, _ error: ResponseError) -> ChainAnswer {
        switch need {
        case .create: .create(.failure(error))
        case .route: .route(.failure(error))
        }
    }

    /// Resolves a deep link as the host does (asking the plugin for `customDeepLinks` types).
    func resolve(_ link: DeepLinkURL, tree: NavigationTree, model: HostModel) -> Result<DeepLinkPlan, AnswerProblem> {
        let resolver = DeepLinkResolver(link: link, tree: tree, registry: model.registry)
        while true {
            switch resolver.advance() {
            case .resolved(let plan): return .success(plan)
            case .invalid(let error): return .failure(.host(error))
            case .needs(let question):
                switch ask(
                    CoordinatorDeepLinkRequest.method, question.request, as: CoordinatorDeepLinkRequest.Result.self)
                {
                case .success(let result): resolver.resume(with: .success(result))
                case .failure(.plugin(let error)):
                    resolver.resume(with: .failure(error))
                    if case .invalid = resolver.advance() { return .failure(.plugin(error)) }
                case .failure(let other): return .failure(other)
                }
            }
        }
    }

    /// Sends what a committed chain leaves to do: `coordinator/dismissed`, `coordinator/tabSelected` and
    /// `coordinator/appeared` notifications, and `coordinator/destroy` for the plugin's removed instances (answers checked by the caller).
    func apply(_ effects: [ChainEffect], model: HostModel) -> [MainSession.Destroyed] {
        var destroyed: [MainSession.Destroyed] = []
        for effect in effects {
            switch effect {
            case .destroy(let instance, let plugin, let type) where plugin == model.plugin:
                destroyed.append(destroy(instance, type: type))
            case .dismissed(let instance, let plugin, let entry, let route, let reason) where plugin == model.plugin:
                notify(
                    CoordinatorDismissedNotification.method,
                    [
                        "instance": .int(instance.rawValue), "entry": .int(entry.rawValue), "route": .string(route),
                        "reason": .string(reason.rawValue),
                    ])
            case .tabSelected(let instance, let plugin, let tab, let isRepeat) where plugin == model.plugin:
                notify(
                    CoordinatorTabSelectedNotification.method,
                    ["instance": .int(instance.rawValue), "tab": .string(tab), "isRepeat": .bool(isRepeat)])
            case .appeared(let instance, let plugin, let entry) where plugin == model.plugin:
                notify(
                    CoordinatorAppearedNotification.method,
                    ["instance": .int(instance.rawValue), "entry": .int(entry.rawValue)])
            default:
                break
            }
        }
        return destroyed
    }

    /// `coordinator/destroy` of one instance, its answer and the lines that carried it.
    func destroy(_ instance: InstanceID, type: String) -> MainSession.Destroyed {
        let mark = self.mark
        let reply = request(
            CoordinatorDestroyRequest.method, ["instance": .int(instance.rawValue), "type": .string(type)])
        return MainSession.Destroyed(instance: instance, type: type, reply: reply, exchange: exchange(since: mark))
    }

    /// A reply as the host takes it: a typed result, the plugin's own error, a result the host refuses, or nothing.
    func decode<T: Decodable>(_ reply: Reply, as type: T.Type, method: String) -> Result<T, AnswerProblem> {
        switch reply {
        case .result(let value):
            do {
                return .success(try Coding.decode(type, from: value))
            } catch {
                let (field, reason) = describeDecodingError(error)
                let location = field.map { " (field 'result.\($0)')" } ?? ""
                return .failure(
                    .host(
                        ResponseError(.invalidAnswer, "the answer to \(method) does not decode\(location): \(reason)")))
            }
        case .error(let error): return .failure(.plugin(error))
        case .timeout, .ended: return .failure(.none(reply))
        }
    }
}

/// Why an answer could not be used.
enum AnswerProblem: Error {
    /// The plugin answered with an error.
    case plugin(ResponseError)
    /// The host refuses the answer (or the link).
    case host(ResponseError)
    /// There was no answer.
    case none(Reply)
}

/// One `coordinator/route` round trip, for choosing the slowest request (ping check) and for timing.
struct RouteTiming {
    let question: RouteQuestion
    let elapsed: Duration
    /// The plugin wrote a line over maxLineBytes while answering: its time is the pipe's (the line-limit check
    /// fails it), so it is not the busy request the ping check wants.
    var wroteOversizeLine = false
}
