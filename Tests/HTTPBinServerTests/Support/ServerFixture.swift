import HTTPBinServer

/// Runs `body` against a server of its own, started on a free port and shut down afterwards.
@discardableResult
func withServer<T>(
    _ configuration: HTTPBinServer.Configuration = .init(), _ body: (HTTPBinServer) async throws -> T
) async throws -> T {
    let server = try await HTTPBinServer.start(configuration)
    let result: T
    do {
        result = try await body(server)
    } catch {
        try? await server.shutdown()
        throw error
    }
    try await server.shutdown()
    return result
}
