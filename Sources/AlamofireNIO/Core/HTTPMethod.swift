/// An HTTP method. Extensible: `extension HTTPMethod { static let custom = HTTPMethod(rawValue: "CUSTOM") }`.
public struct HTTPMethod: RawRepresentable, Equatable, Hashable, Sendable {
    /// `CONNECT`
    public static let connect = HTTPMethod(rawValue: "CONNECT")
    /// `DELETE`
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `GET`
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `PATCH`
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `POST`
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `QUERY`
    public static let query = HTTPMethod(rawValue: "QUERY")
    /// `TRACE`
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// The method's name as sent on the wire.
    public let rawValue: String

    /// Creates a method from its name.
    ///
    /// - Parameter rawValue: the method's name, such as `"GET"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}
