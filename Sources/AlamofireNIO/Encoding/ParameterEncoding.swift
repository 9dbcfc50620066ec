#if canImport(FoundationNetworking)
public import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Parameters as a dictionary, for the `ParameterEncoding` API.
///
/// Values are `Sendable`, as in Alamofire 5.12. In the Swift 5 language mode a nested literal of mixed
/// types (`["baz": ["a", 1]]`) is accepted as it is; the Swift 6 mode needs its type spelled out
/// (`["a", 1] as [any Sendable]`), as with Alamofire.
public typealias Parameters = [String: any Any & Sendable]

/// Encodes a ``Parameters`` dictionary into a request: the API Alamofire had before `ParameterEncoder`.
public protocol ParameterEncoding: Sendable {
    /// The request with the parameters encoded into it.
    /// - Throws: ``AFError/parameterEncodingFailed(reason:)``.
    func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest
}

/// Encodes parameters as a query string or form body, sorting keys, with `key[]` for arrays and
/// `key[subkey]` for nested dictionaries.
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded parameters go: the query for GET, HEAD and DELETE with `.methodDependent`.
    public typealias Destination = URLEncodedFormParameterEncoder.Destination
    /// How array elements are keyed: `key[]` by default.
    public typealias ArrayEncoding = URLEncodedFormEncoder.ArrayEncoding
    /// How `Bool` values are written: `1`/`0` by default.
    public typealias BoolEncoding = URLEncodedFormEncoder.BoolEncoding

    /// The method-dependent encoding.
    public static var `default`: URLEncoding { URLEncoding() }
    /// Always into the query.
    public static var queryString: URLEncoding { URLEncoding(destination: .queryString) }
    /// Always into the body.
    public static var httpBody: URLEncoding { URLEncoding(destination: .httpBody) }

    /// Where the encoded parameters go.
    public let destination: Destination
    /// How array elements are keyed.
    public let arrayEncoding: ArrayEncoding
    /// How `Bool` values are written.
    public let boolEncoding: BoolEncoding

    /// Creates an encoding that writes parameters as a form.
    ///
    /// - Parameters:
    ///   - destination: where the parameters go.
    ///   - arrayEncoding: how array elements are keyed.
    ///   - boolEncoding: how `Bool` values are written.
    @preconcurrency public init(
        destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets, boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Returns the request with `parameters` encoded as a query string or a form body, as `destination` says.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var request = try urlRequest.asURLRequest()
        guard let parameters else { return request }
        if let method = request.method, destination.encodesParametersInURL(for: method) {
            guard let url = request.url else { throw AFError.parameterEncodingFailed(reason: .missingURL) }
            if var components = URLComponents(url: url, resolvingAgainstBaseURL: false), !parameters.isEmpty {
                let encoded = query(parameters)
                components.percentEncodedQuery = components.percentEncodedQuery.map { $0 + "&" + encoded } ?? encoded
                request.url = components.url
            }
        } else {
            if request.headers["Content-Type"] == nil {
                request.headers.update(.contentType("application/x-www-form-urlencoded; charset=utf-8"))
            }
            request.httpBody = Data(query(parameters).utf8)
        }
        return request
    }

    /// The `(key, value)` pairs of one parameter, escaped, nested values flattened.
    public func queryComponents(fromKey key: String, value: Any) -> [(String, String)] {
        switch value {
        case let dictionary as [String: Any]:
            return dictionary.sorted { $0.key < $1.key }.flatMap { queryComponents(fromKey: "\(key)[\($0.key)]", value: $0.value) }
        case let array as [Any]:
            return array.enumerated().flatMap {
                queryComponents(fromKey: arrayEncoding.encode(key, atIndex: $0.offset), value: $0.element)
            }
        case let number as NSNumber:
            // Numbers first, as Alamofire checks them: an `NSNumber` holding 1 also casts to `Bool`, but
            // only one made from a `Bool` is written as one.
            if isBoolean(number) {
                return [(escape(key), escape(boolEncoding.encode(number.boolValue)))]
            }
            return [(escape(key), escape("\(number)"))]
        case let bool as Bool:
            return [(escape(key), escape(boolEncoding.encode(bool)))]
        default:
            return [(escape(key), escape("\(value)"))]
        }
    }

    /// Percent-escapes everything outside ``Foundation/CharacterSet/afURLQueryAllowed``.
    public func escape(_ string: String) -> String {
        string.addingPercentEncoding(withAllowedCharacters: .afURLQueryAllowed) ?? string
    }

    private func query(_ parameters: Parameters) -> String {
        parameters.sorted { $0.key < $1.key }.flatMap { queryComponents(fromKey: $0.key, value: $0.value) }
            .map { "\($0)=\($1)" }.joined(separator: "&")
    }
}

/// Whether an `NSNumber` holds a Bool. Darwin bridges `Bool` to a distinct CFBoolean; corelibs
/// Foundation records the type in `objCType` ("c" for Bool there, as for `CChar`).
private func isBoolean(_ number: NSNumber) -> Bool {
    #if canImport(Darwin)
    return CFGetTypeID(number) == CFBooleanGetTypeID()
    #else
    return String(cString: number.objCType) == "c" && (number == NSNumber(value: true) || number == NSNumber(value: false))
    #endif
}

/// Encodes parameters as a JSON body with `JSONSerialization`.
public struct JSONEncoding: ParameterEncoding {
    /// Why JSON encoding failed.
    public enum Error: Swift.Error {
        /// The value is not one `JSONSerialization` can write.
        case invalidJSONObject
    }

    /// Compact JSON.
    public static var `default`: JSONEncoding { JSONEncoding() }
    /// Pretty-printed JSON.
    public static var prettyPrinted: JSONEncoding { JSONEncoding(options: .prettyPrinted) }

    /// The `JSONSerialization` options used.
    public let options: JSONSerialization.WritingOptions

    /// Creates an encoding that writes parameters as a JSON body.
    ///
    /// - Parameter options: the `JSONSerialization` options to use.
    public init(options: JSONSerialization.WritingOptions = []) {
        self.options = options
    }

    /// Returns the request with `parameters` as its JSON body, setting `Content-Type: application/json` unless one is set.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        try encode(urlRequest, withJSONObject: parameters)
    }

    /// The request with any JSON value (such as an array) as its body.
    public func encode(_ urlRequest: any URLRequestConvertible, withJSONObject jsonObject: Any? = nil) throws -> URLRequest {
        var request = try urlRequest.asURLRequest()
        guard let jsonObject else { return request }
        guard JSONSerialization.isValidJSONObject(jsonObject) else {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: Error.invalidJSONObject))
        }
        do {
            request.httpBody = try JSONSerialization.data(withJSONObject: jsonObject, options: options)
        } catch {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: error))
        }
        if request.headers["Content-Type"] == nil {
            request.headers.update(.contentType("application/json"))
        }
        return request
    }
}

extension JSONEncoding.Error {
    /// Alamofire's description of the failure.
    public var localizedDescription: String {
        """
        Invalid JSON object provided for parameter or object encoding. \
        This is most likely due to a value which can't be represented in Objective-C.
        """
    }
}

/// Encodes parameters as a property list body with `PropertyListSerialization`.
public struct PropertyListEncoding: ParameterEncoding {
    /// XML property lists.
    public static var `default`: PropertyListEncoding { PropertyListEncoding() }
    /// XML property lists.
    public static var xml: PropertyListEncoding { PropertyListEncoding(format: .xml) }
    /// Binary property lists.
    public static var binary: PropertyListEncoding { PropertyListEncoding(format: .binary) }

    /// The property list format written.
    public let format: PropertyListSerialization.PropertyListFormat
    /// The `PropertyListSerialization` write options used.
    public let options: PropertyListSerialization.WriteOptions

    /// Creates an encoding that writes parameters as a property list body.
    ///
    /// - Parameters:
    ///   - format: the property list format.
    ///   - options: the write options.
    public init(format: PropertyListSerialization.PropertyListFormat = .xml, options: PropertyListSerialization.WriteOptions = 0) {
        self.format = format
        self.options = options
    }

    /// Returns the request with `parameters` as its property list body, setting `Content-Type: application/x-plist` unless
    /// one is set.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var request = try urlRequest.asURLRequest()
        guard let parameters else { return request }
        do {
            request.httpBody = try PropertyListSerialization.data(fromPropertyList: parameters, format: format, options: options)
        } catch {
            throw AFError.parameterEncodingFailed(reason: .customEncodingFailed(error: error))
        }
        if request.headers["Content-Type"] == nil {
            request.headers.update(.contentType("application/x-plist"))
        }
        return request
    }
}
