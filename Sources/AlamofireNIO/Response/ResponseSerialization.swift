public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Turns what a data request received into a value.
public protocol DataResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The type of value the serializer produces.
    associatedtype SerializedObject

    /// The value; throw (ideally an ``AFError``) when there is none.
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> SerializedObject
}

/// A serializer for data and downloads (which read their file, then serialize its contents) with
/// Alamofire's handling of empty responses and preprocessing.
public protocol ResponseSerializer<SerializedObject>: DataResponseSerializerProtocol, DownloadResponseSerializerProtocol {
    /// Applied to the data before it is serialized.
    var dataPreprocessor: any DataPreprocessor { get }
    /// Methods whose responses may be empty (HEAD).
    var emptyRequestMethods: Set<HTTPMethod> { get }
    /// Status codes whose responses may be empty (204, 205).
    var emptyResponseCodes: Set<Int> { get }
}

// The defaults' sets, made once: every serializer reads them, and a set made per read is an allocation
// per request.
private let headOnly: Set<HTTPMethod> = [.head]
private let noContentCodes: Set<Int> = [204, 205]

extension ResponseSerializer {
    /// The preprocessor used when none is given: ``PassthroughPreprocessor``, which leaves the data unchanged.
    public static var defaultDataPreprocessor: any DataPreprocessor { PassthroughPreprocessor() }
    /// The methods whose responses may be empty when none are given: `HEAD`.
    public static var defaultEmptyRequestMethods: Set<HTTPMethod> { headOnly }
    /// The status codes whose responses may be empty when none are given: 204 and 205.
    public static var defaultEmptyResponseCodes: Set<Int> { noContentCodes }

    /// The default preprocessor, ``ResponseSerializer/defaultDataPreprocessor``.
    public var dataPreprocessor: any DataPreprocessor { Self.defaultDataPreprocessor }
    /// The default methods allowing an empty response, ``ResponseSerializer/defaultEmptyRequestMethods``.
    public var emptyRequestMethods: Set<HTTPMethod> { Self.defaultEmptyRequestMethods }
    /// The default status codes allowing an empty response, ``ResponseSerializer/defaultEmptyResponseCodes``.
    public var emptyResponseCodes: Set<Int> { Self.defaultEmptyResponseCodes }

    /// Whether the request's method allows an empty response; nil when unknown.
    public func requestAllowsEmptyResponseData(_ request: URLRequest?) -> Bool? {
        request.flatMap(\.method).map { emptyRequestMethods.contains($0) }
    }

    /// Whether the response's status code allows an empty response; nil when unknown.
    public func responseAllowsEmptyResponseData(_ response: HTTPURLResponse?) -> Bool? {
        response.map { emptyResponseCodes.contains($0.statusCode) }
    }

    /// The step every serializer starts with: rethrows the request's error, lets an empty body
    /// through (as empty data) only where the method or status allows it, else preprocesses the data.
    func preprocessedData(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        if let error { throw error }
        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(forRequest: request, response: response) else {
                throw AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            return Data()
        }
        return try dataPreprocessor.preprocess(data)
    }

    /// Whether an empty body is a valid outcome here.
    public func emptyResponseAllowed(forRequest request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        (requestAllowsEmptyResponseData(request) == true) || (responseAllowsEmptyResponseData(response) == true)
    }
}

/// Transforms data before serialization.
public protocol DataPreprocessor: Sendable {
    /// Returns `data` transformed, ready to be serialized; throws when it cannot be.
    func preprocess(_ data: Data) throws -> Data
}

/// Leaves data as it is.
public struct PassthroughPreprocessor: DataPreprocessor {
    /// Creates a preprocessor that leaves data unchanged.
    public init() {}
    /// Returns `data` unchanged.
    public func preprocess(_ data: Data) throws -> Data { data }
}

/// Strips Google's `)]}',\n` anti-XSSI prefix.
public struct GoogleXSSIPreprocessor: DataPreprocessor {
    /// Creates a preprocessor that strips Google's anti-XSSI prefix.
    public init() {}
    /// Returns `data` without its leading `)]}',\n` prefix, if it has one.
    public func preprocess(_ data: Data) throws -> Data {
        let prefix = Data(")]}',\n".utf8)
        return data.starts(with: prefix) ? data.dropFirst(prefix.count) : data
    }
}

extension DataPreprocessor where Self == PassthroughPreprocessor {
    /// A ``PassthroughPreprocessor``, which leaves data unchanged.
    public static var passthrough: PassthroughPreprocessor { PassthroughPreprocessor() }
}

extension DataPreprocessor where Self == GoogleXSSIPreprocessor {
    /// A ``GoogleXSSIPreprocessor``, which strips Google's anti-XSSI prefix.
    public static var googleXSSI: GoogleXSSIPreprocessor { GoogleXSSIPreprocessor() }
}

/// The data itself; an empty body is an error unless the method or status allows it.
public final class DataResponseSerializer: ResponseSerializer {
    /// The preprocessor applied to the data before it is returned.
    public let dataPreprocessor: any DataPreprocessor
    /// The status codes whose responses may be empty.
    public let emptyResponseCodes: Set<Int>
    /// The methods whose responses may be empty.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer that returns the response's data.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Applied to the data before it is returned.
    ///   - emptyResponseCodes: The status codes whose responses may be empty.
    ///   - emptyRequestMethods: The methods whose responses may be empty.
    public init(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Returns the preprocessed data, or empty data where an empty response is allowed; rethrows the request's error.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        try preprocessedData(request: request, response: response, data: data, error: error)
    }
}

/// Text, in the given encoding, else the response's charset, else ISO Latin 1 (as Alamofire).
public final class StringResponseSerializer: ResponseSerializer {
    /// The preprocessor applied to the data before it is decoded as text.
    public let dataPreprocessor: any DataPreprocessor
    /// The encoding to use; nil follows the response.
    public let encoding: String.Encoding?
    /// The status codes whose responses may be empty.
    public let emptyResponseCodes: Set<Int>
    /// The methods whose responses may be empty.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer that decodes the response's data as text.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Applied to the data before it is decoded.
    ///   - encoding: The encoding to use; `nil` uses the response's charset, falling back to ISO Latin 1.
    ///   - emptyResponseCodes: The status codes whose responses may be empty.
    ///   - emptyRequestMethods: The methods whose responses may be empty.
    public init(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor, encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Returns the data decoded as a `String`, or `""` for an allowed empty response.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> String {
        let data = try preprocessedData(request: request, response: response, data: data, error: error)
        if data.isEmpty { return "" }
        let chosen = encoding ?? response?.textEncodingName.flatMap(String.Encoding.init(ianaCharsetName:)) ?? .isoLatin1
        guard let string = String(data: data, encoding: chosen) else {
            throw AFError.responseSerializationFailed(reason: .stringSerializationFailed(encoding: chosen))
        }
        return string
    }
}

extension String.Encoding {
    /// The encoding an IANA charset name (as in `Content-Type: …; charset=`) stands for.
    init?(ianaCharsetName name: String) {
        switch name.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "us-ascii", "ascii": self = .ascii
        case "iso-8859-1", "latin1", "iso_8859-1": self = .isoLatin1
        case "iso-8859-2", "latin2": self = .isoLatin2
        case "utf-16": self = .utf16
        case "utf-16be": self = .utf16BigEndian
        case "utf-16le": self = .utf16LittleEndian
        case "utf-32": self = .utf32
        case "utf-32be": self = .utf32BigEndian
        case "utf-32le": self = .utf32LittleEndian
        case "windows-1252", "cp1252": self = .windowsCP1252
        case "windows-1251", "cp1251": self = .windowsCP1251
        case "shift_jis", "shift-jis", "sjis": self = .shiftJIS
        case "euc-jp": self = .japaneseEUC
        case "macintosh", "mac": self = .macOSRoman
        default: return nil
        }
    }
}

/// `JSONSerialization`'s value; an empty body is `NSNull` when allowed.
public final class JSONResponseSerializer: ResponseSerializer {
    /// The preprocessor applied to the data before it is parsed.
    public let dataPreprocessor: any DataPreprocessor
    /// The status codes whose responses may be empty.
    public let emptyResponseCodes: Set<Int>
    /// The methods whose responses may be empty.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// The options given to `JSONSerialization` when parsing.
    public let options: JSONSerialization.ReadingOptions

    /// Creates a serializer that parses the response's data with `JSONSerialization`.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Applied to the data before it is parsed.
    ///   - emptyResponseCodes: The status codes whose responses may be empty.
    ///   - emptyRequestMethods: The methods whose responses may be empty.
    ///   - options: The `JSONSerialization` reading options; `.allowFragments` by default.
    public init(
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
    }

    /// Returns the parsed JSON object, or `NSNull` for an allowed empty response.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Any {
        let data = try preprocessedData(request: request, response: response, data: data, error: error)
        if data.isEmpty { return NSNull() }
        do {
            return try JSONSerialization.jsonObject(with: data, options: options)
        } catch {
            throw AFError.responseSerializationFailed(reason: .jsonSerializationFailed(error: error))
        }
    }
}

/// Decodes data (`JSONDecoder`, `PropertyListDecoder`, or any other).
public protocol DataDecoder: Sendable {
    /// Decodes a value of `type` from `data`, throwing when it cannot.
    func decode<D: Decodable>(_ type: D.Type, from data: Data) throws -> D
}

extension JSONDecoder: DataDecoder {}
extension PropertyListDecoder: DataDecoder {}

/// A type that stands for an empty response.
public protocol EmptyResponse {
    /// The value an empty response decodes to.
    static func emptyValue() -> Self
}

/// The empty response: decodes from an empty body (or `{}`).
public struct Empty: Codable, Sendable, Hashable {
    /// The one value.
    public static let value = Empty()
}

extension Empty: EmptyResponse {
    /// Returns ``Empty/value``.
    public static func emptyValue() -> Empty { value }
}

/// A `Decodable` value; an empty body decodes to `T.emptyValue()` when `T` is ``EmptyResponse`` and
/// the method or status allows emptiness.
public final class DecodableResponseSerializer<T: Decodable>: ResponseSerializer {
    /// The preprocessor applied to the data before it is decoded.
    public let dataPreprocessor: any DataPreprocessor
    /// The decoder that turns the data into `T`.
    public let decoder: any DataDecoder
    /// The status codes whose responses may be empty.
    public let emptyResponseCodes: Set<Int>
    /// The methods whose responses may be empty.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates a serializer that decodes the response's data into `T`.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Applied to the data before it is decoded.
    ///   - decoder: The decoder to use; a `JSONDecoder` by default.
    ///   - emptyResponseCodes: The status codes whose responses may be empty.
    ///   - emptyRequestMethods: The methods whose responses may be empty.
    public init(
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.decoder = decoder
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// Returns the decoded value, or `T.emptyValue()` for an allowed empty response when `T` is an ``EmptyResponse``.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> T {
        let data = try preprocessedData(request: request, response: response, data: data, error: error)
        if data.isEmpty {
            guard let emptyType = T.self as? any EmptyResponse.Type, let empty = emptyType.emptyValue() as? T else {
                throw AFError.responseSerializationFailed(reason: .invalidEmptyResponse(type: "\(T.self)"))
            }
            return empty
        }
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw AFError.responseSerializationFailed(reason: .decodingFailed(error: error))
        }
    }
}

/// A property list value, as `PropertyListSerialization` reads it.
public final class PropertyListResponseSerializer: ResponseSerializer {
    /// The preprocessor applied to the data before it is parsed.
    public let dataPreprocessor: any DataPreprocessor
    /// The status codes whose responses may be empty.
    public let emptyResponseCodes: Set<Int>
    /// The methods whose responses may be empty.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// The options given to `PropertyListSerialization` when parsing.
    public let options: PropertyListSerialization.ReadOptions

    /// Creates a serializer that parses the response's data with `PropertyListSerialization`.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Applied to the data before it is parsed.
    ///   - emptyResponseCodes: The status codes whose responses may be empty.
    ///   - emptyRequestMethods: The methods whose responses may be empty.
    ///   - options: The `PropertyListSerialization` reading options.
    public init(
        dataPreprocessor: any DataPreprocessor = PropertyListResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = PropertyListResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = PropertyListResponseSerializer.defaultEmptyRequestMethods,
        options: PropertyListSerialization.ReadOptions = []
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
    }

    /// Returns the parsed property list, or `NSNull` for an allowed empty response.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Any {
        let data = try preprocessedData(request: request, response: response, data: data, error: error)
        if data.isEmpty { return NSNull() }
        do {
            return try PropertyListSerialization.propertyList(from: data, options: options, format: nil)
        } catch {
            throw AFError.responseSerializationFailed(reason: .customSerializationFailed(error: error))
        }
    }
}

// MARK: Serializers that read the response only for an empty body

/// A serializer of AlamofireNIO's own that reads the response only to ask whether its status
/// allows an empty body: given a body (or an error), it is called without the response, which is
/// then never made (see `ReceivedResponse`). Its value is the same either way. A serializer marked
/// here must never read the response after `preprocessedData(request:response:data:error:)`.
protocol ReadsResponseOnlyForEmptyBody {}

extension DataResponseSerializer: ReadsResponseOnlyForEmptyBody {}
extension DecodableResponseSerializer: ReadsResponseOnlyForEmptyBody {}
extension JSONResponseSerializer: ReadsResponseOnlyForEmptyBody {}
extension PropertyListResponseSerializer: ReadsResponseOnlyForEmptyBody {}

extension Request.Outcome {
    /// The response to hand `serializer`: nil, and never made, when `serializer` reads it only for
    /// an empty body and there is a body or an error.
    func response(for serializer: some DataResponseSerializerProtocol) -> HTTPURLResponse? {
        if serializer is any ReadsResponseOnlyForEmptyBody, error != nil || data?.isEmpty == false { return nil }
        return response
    }
}

// MARK: Downloads

/// Turns what a download request received (a file) into a value.
public protocol DownloadResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The type of value the serializer produces.
    associatedtype SerializedObject

    /// The value; throw (ideally an ``AFError``) when there is none.
    func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?) throws -> SerializedObject
}

extension DownloadResponseSerializerProtocol where Self: DataResponseSerializerProtocol {
    /// Reads the file and serializes its contents as the data serializer would.
    public func serializeDownload(
        request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?
    ) throws
        -> SerializedObject
    {
        if let error { throw error }
        guard let fileURL else { throw AFError.responseSerializationFailed(reason: .inputFileNil) }
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch {
            throw AFError.responseSerializationFailed(reason: .inputFileReadFailed(at: fileURL))
        }
        return try serialize(request: request, response: response, data: data, error: nil)
    }
}

/// The downloaded file's URL itself.
public struct URLResponseSerializer: DownloadResponseSerializerProtocol {
    /// Creates a serializer that returns the downloaded file's URL.
    public init() {}

    /// Returns the downloaded file's URL; rethrows the request's error, and throws when there is no file.
    public func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?) throws -> URL {
        if let error { throw error }
        guard let fileURL else { throw AFError.responseSerializationFailed(reason: .inputFileNil) }
        return fileURL
    }
}

extension DownloadResponseSerializerProtocol where Self == URLResponseSerializer {
    /// The downloaded file's URL.
    public static var url: URLResponseSerializer { URLResponseSerializer() }
}
