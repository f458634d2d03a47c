import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
public import Logging
import Glibc
import NIOCore
import Synchronization

/// Why a studio cannot serve, in terms its user can act on (the CLI words the fix).
public enum StudioServerError: Error, Equatable {
    /// Another program already listens on this TCP port of 127.0.0.1.
    case portInUse(Int)
}

/// The studio's web server: the page's files and one WebSocket per browser tab, each relayed to the host's control
/// socket as a control client of its own ([HostRelay]). Listens on 127.0.0.1 only.
///
/// Every request must present the token as the first segment of its path (`/TOKEN/`, so the page's relative module
/// imports carry it without a cookie another local studio could read) and name this studio as its `Host` (a DNS
/// rebinding page cannot); a WebSocket upgrade must also come from this studio's own `Origin` (another web site's
/// script cannot open one). Anything else is `403 Forbidden`.
public struct StudioServer: Sendable {
    /// What this server was started with (its token included).
    public let configuration: StudioConfiguration
    private let page: PageFiles
    private let logger: Logger

    /// Reads the page's files; throws (saying where it looked) if they are missing.
    public init(configuration: StudioConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        page = try PageFiles.load(from: configuration.pageDirectory)
    }

    /// Serves until SIGINT or SIGTERM. `ready` gets the page's URL (with the token) once the port is bound.
    ///
    /// - Throws: ``StudioServerError/portInUse(_:)`` when another program listens on the configured port; other
    ///   errors as SwiftNIO reports them.
    public func run(ready: @escaping @Sendable (String) -> Void) async throws {
        let port = Atomic<Int>(configuration.port)
        let server = self
        let app = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in
                server.respond(to: request, port: port.load(ordering: .acquiring))
            },
            server: .http1WebSocketUpgrade(configuration: .init(ws: .init(maxFrameSize: 1 << 20))) { request, _, _ in
                server.shouldUpgrade(request, port: port.load(ordering: .acquiring))
            },
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: configuration.port)),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? server.configuration.port
                port.store(bound, ordering: .releasing)
                ready("http://127.0.0.1:\(bound)/\(server.configuration.token)/")
            },
            logger: logger
        )
        do { try await app.runService() } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw StudioServerError.portInUse(configuration.port)
        }
    }

    // MARK: - HTTP

    /// The hosts a browser on this machine names this studio by; anything else is a rebinding attempt.
    private func isOwnAuthority(_ authority: String?, port: Int) -> Bool {
        authority == "127.0.0.1:\(port)" || authority == "localhost:\(port)"
    }

    /// The path after a valid token (`""` for the page itself), or nil when the token is missing or wrong.
    private func pathAfterToken(_ path: String) -> Substring? {
        let parts = path.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard path.hasPrefix("/"), let first = parts.first, StudioToken.matches(first, configuration.token) else {
            return nil
        }
        return parts.count > 1 ? parts[1] : ""
    }

    func respond(to request: Request, port: Int) -> Response {
        guard isOwnAuthority(request.head.authority, port: port) else {
            return refusal(.forbidden, "403 Forbidden: this studio answers only to 127.0.0.1:\(port)\n")
        }
        guard let rest = pathAfterToken(request.uri.path) else {
            return refusal(.forbidden, "403 Forbidden: open the URL with the token that `switchyard studio` printed\n")
        }
        guard request.method == .get || request.method == .head else {
            return refusal(.methodNotAllowed, "405 Method Not Allowed\n")
        }
        if rest == "ws" {
            // An upgrade that reached the HTTP side was refused by `shouldUpgrade`.
            return refusal(
                .forbidden, "403 Forbidden: WebSocket upgrades are taken only from this studio's own page (Origin)\n")
        }
        let name = rest.isEmpty ? "index.html" : String(rest)
        guard let file = page.files[name] else { return refusal(.notFound, "404 Not Found\n") }
        var headers = Self.securityHeaders(port: port)
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }

    private func refusal(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = Self.securityHeaders(port: 0)
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// No caching (the token is in every URL), no framing by other sites, and the page may talk only to this server.
    private static func securityHeaders(port: Int) -> HTTPFields {
        var headers = HTTPFields()
        headers[.cacheControl] = "no-store"
        headers[.xContentTypeOptions] = "nosniff"
        if let referrer = HTTPField.Name("Referrer-Policy") { headers[referrer] = "no-referrer" }
        headers[.contentSecurityPolicy] =
            "default-src 'self'; connect-src 'self' ws://127.0.0.1:\(port) ws://localhost:\(port); img-src 'self' data:; "
            + "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        return headers
    }

    // MARK: - WebSocket

    func shouldUpgrade(
        _ request: HTTPRequest, port: Int
    ) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        let origin = request.headerFields[.origin]
        guard isOwnAuthority(request.authority, port: port),
            let path = request.path, pathAfterToken(path) == "ws",
            origin == "http://127.0.0.1:\(port)" || origin == "http://localhost:\(port)"
        else {
            logger.notice("refused a WebSocket upgrade (path, Host or Origin '\(origin ?? "none")' not this studio's)")
            return .dontUpgrade
        }
        let configuration = configuration
        let logger = logger
        return .upgrade([:]) { inbound, outbound, _ in
            await HostRelay(configuration: configuration, logger: logger).run(inbound: inbound, outbound: outbound)
        }
    }
}
