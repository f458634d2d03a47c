/// A protocol method: its wire name. Types are named after the method (`coordinator/route` →
/// `CoordinatorRouteRequest`) so the string and the type can be grepped together.
public protocol MethodDescriptor: Sendable {
    static var method: String { get }
}

/// A method that expects a response.
public protocol RequestMethod: MethodDescriptor {
    associatedtype Params: Codable & Sendable
    associatedtype Result: Codable & Sendable
}

/// A method that expects no response.
public protocol NotificationMethod: MethodDescriptor {
    associatedtype Params: Codable & Sendable
}

// Direction markers: the host's send functions accept only host-to-plugin methods, so a method is never sent the
// wrong way (LSP's `TextDocumentRequest` idea, applied to direction).

/// A request the host sends to a plugin.
public protocol HostToPluginRequest: RequestMethod {}
/// A notification the host sends to a plugin.
public protocol HostToPluginNotification: NotificationMethod {}
/// A request a plugin sends to the host.
public protocol PluginToHostRequest: RequestMethod {}
/// A notification a plugin sends to the host.
public protocol PluginToHostNotification: NotificationMethod {}
/// A request a control client sends to the host.
public protocol ControlRequest: RequestMethod {}
/// A notification the host sends to a control client.
public protocol ControlNotification: NotificationMethod {}

/// No parameters or no result: encodes as `{}`, and decodes from `{}`, `null` or absence.
public struct Empty: Codable, Sendable, Equatable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: IndexKey.self)
    }
}
