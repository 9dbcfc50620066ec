import NIOHTTP1

/// The reason phrase of a status code (`404` → `Not Found`), from SwiftNIO's table; kept in a file
/// of its own because NIOHTTP1's `HTTPHeaders` would clash with Alamofire's elsewhere.
func reasonPhrase(_ statusCode: Int) -> String {
    HTTPResponseStatus(statusCode: statusCode).reasonPhrase
}
