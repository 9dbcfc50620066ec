import AFSynchronization
import AlamofireNIO
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Imported without @testable: only what AlamofireNIO declares `open` can be overridden here, as
// in a user's module (Moya's tests subclass Session this way).

/// Records each request method called, then lets Session do the work.
private final class RecordingSession: Session, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []

    var calls: [String] { lock.withLock { recorded } }

    private func record(_ name: String) { lock.withLock { recorded.append(name) } }

    override func request(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        record("request(encoding)")
        return super.request(
            convertible, method: method, parameters: parameters, encoding: encoding, headers: headers, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier)
    }

    override func request<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        record("request(encoder)")
        return super.request(
            convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier)
    }

    override func request(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> DataRequest {
        record("request(urlRequest)")
        return super.request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    override func download(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil, to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        record("download(encoding)")
        return super.download(
            convertible, method: method, parameters: parameters, encoding: encoding, headers: headers, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier, to: destination)
    }

    override func download<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        record("download(encoder)")
        return super.download(
            convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier, to: destination)
    }

    override func download(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        record("download(urlRequest)")
        return super.download(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    override func download(
        resumingWith data: Data, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        record("download(resumingWith)")
        return super.download(
            resumingWith: data, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    override func upload(
        _ data: Data, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        record("upload(data, to)")
        return super.upload(
            data, to: convertible, method: method, headers: headers, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager, requestModifier: requestModifier)
    }

    override func upload(
        _ data: Data, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        record("upload(data, with)")
        return super.upload(
            data, with: convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    override func upload(
        _ fileURL: URL, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        record("upload(file, to)")
        return super.upload(
            fileURL, to: convertible, method: method, headers: headers, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager, requestModifier: requestModifier)
    }

    override func upload(
        _ fileURL: URL, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        record("upload(file, with)")
        return super.upload(
            fileURL, with: convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    override func upload(
        _ stream: InputStream, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        record("upload(stream, to)")
        return super.upload(
            stream, to: convertible, method: method, headers: headers, interceptor: interceptor, fileManager: fileManager,
            requestModifier: requestModifier)
    }

    override func upload(
        _ stream: InputStream, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        record("upload(stream, with)")
        return super.upload(
            stream, with: convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    override func streamRequest<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        record("streamRequest(encoder)")
        return super.streamRequest(
            convertible, method: method, parameters: parameters, encoder: encoder, headers: headers,
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier)
    }

    override func streamRequest(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        record("streamRequest(url)")
        return super.streamRequest(
            convertible, method: method, headers: headers, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier)
    }

    override func streamRequest(
        _ convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> DataStreamRequest {
        record("streamRequest(urlRequest)")
        return super.streamRequest(
            convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    override func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void, to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold, method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        record("upload(multipart closure, to)")
        return super.upload(
            multipartFormData: multipartFormData, to: url, usingThreshold: encodingMemoryThreshold, method: method, headers: headers,
            interceptor: interceptor, fileManager: fileManager, requestModifier: requestModifier)
    }

    override func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void, with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        record("upload(multipart closure, with)")
        return super.upload(
            multipartFormData: multipartFormData, with: request, usingThreshold: encodingMemoryThreshold, interceptor: interceptor,
            fileManager: fileManager)
    }

    override func upload(
        multipartFormData: MultipartFormData, to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold, method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        record("upload(multipart form, to)")
        return super.upload(
            multipartFormData: multipartFormData, to: url, usingThreshold: encodingMemoryThreshold, method: method, headers: headers,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager,
            requestModifier: requestModifier)
    }

    override func upload(
        multipartFormData: MultipartFormData, with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        record("upload(multipart form, with)")
        return super.upload(
            multipartFormData: multipartFormData, with: request, usingThreshold: encodingMemoryThreshold, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }
}

@Suite struct SessionSubclassTests {
    /// Every request method Alamofire declares `open` reaches the subclass's override through a
    /// `Session` reference, and the request it returns is Session's own.
    @Test func everyOpenRequestMethodCanBeOverridden() throws {
        let recording = RecordingSession(startRequestsImmediately: false)
        let session: Session = recording
        let url = "http://127.0.0.1:9/"
        let urlRequest = try URLRequest(url: url, method: .post)
        let file = URL(fileURLWithPath: "/dev/null")
        let form = MultipartFormData()
        let requests: [Request] = [
            session.request(url, parameters: ["a": 1] as Parameters),
            session.request(url, parameters: ["a": "1"], encoder: JSONParameterEncoder.default),
            session.request(urlRequest),
            session.download(url, parameters: ["a": 1] as Parameters),
            session.download(url, parameters: ["a": "1"], encoder: URLEncodedFormParameterEncoder.default),
            session.download(urlRequest),
            session.download(resumingWith: Data()),
            session.upload(Data("x".utf8), to: url),
            session.upload(Data("x".utf8), with: urlRequest),
            session.upload(file, to: url),
            session.upload(file, with: urlRequest),
            session.upload(InputStream(data: Data("x".utf8)), to: url),
            session.upload(InputStream(data: Data("x".utf8)), with: urlRequest),
            session.streamRequest(url, parameters: ["a": "1"], encoder: URLEncodedFormParameterEncoder.default),
            session.streamRequest(url),
            session.streamRequest(urlRequest),
            session.upload(multipartFormData: { $0.append(Data("x".utf8), withName: "x") }, to: url),
            session.upload(multipartFormData: { $0.append(Data("x".utf8), withName: "x") }, with: urlRequest),
            session.upload(multipartFormData: form, to: url),
            session.upload(multipartFormData: form, with: urlRequest),
        ]
        // Each convenience form goes through the open `URLRequestConvertible` form, as in Alamofire, so an
        // override of that one sees every request of its kind.
        #expect(
            recording.calls == [
                "request(encoding)", "request(urlRequest)", "request(encoder)", "request(urlRequest)", "request(urlRequest)",
                "download(encoding)", "download(urlRequest)", "download(encoder)", "download(urlRequest)", "download(urlRequest)",
                "download(resumingWith)",
                "upload(data, to)", "upload(data, with)", "upload(data, with)",
                "upload(file, to)", "upload(file, with)", "upload(file, with)",
                "upload(stream, to)", "upload(stream, with)", "upload(stream, with)",
                "streamRequest(encoder)", "streamRequest(urlRequest)", "streamRequest(url)", "streamRequest(urlRequest)",
                "streamRequest(urlRequest)",
                "upload(multipart closure, to)", "upload(multipart form, with)",
                "upload(multipart closure, with)", "upload(multipart form, with)",
                "upload(multipart form, to)", "upload(multipart form, with)",
            ])
        #expect(requests.allSatisfy { $0.state == .initialized })
        requests.forEach { $0.cancel() }
    }

    /// As with Alamofire, a subclass's own initializer calls the designated `init(session:delegate:rootQueue:…)`
    /// with a URLSession it made; a subclass without initializers inherits them all.
    @Test func aSubclassInitializerCallsTheDesignatedInitializerWithItsURLSession() {
        let stub = StubbedSession()
        #expect(stub.session === stub.underlying)
        #expect(stub.session.delegate === stub.delegate)
        #expect(stub.configuration.httpAdditionalHeaders?["X-Stub"] as? String == "yes")
        #expect(stub.startRequestsImmediately == false)

        let inherited = InheritingSession(configuration: .ephemeral, startRequestsImmediately: true)
        #expect(inherited.session.delegate === inherited.delegate)
        #expect(inherited.session.delegateQueue.underlyingQueue === inherited.rootQueue)
    }
}

/// A subclass that declares no initializer.
private final class InheritingSession: Session, @unchecked Sendable {}

/// A mock as Alamofire users write one: its initializer makes the URLSession and hands it up.
private final class StubbedSession: Session, @unchecked Sendable {
    let underlying: URLSession

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Stub": "yes"]
        let delegate = SessionDelegate()
        let rootQueue = DispatchQueue(label: "stub.rootQueue")
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.underlyingQueue = rootQueue
        underlying = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
        super.init(session: underlying, delegate: delegate, rootQueue: rootQueue, startRequestsImmediately: false)
    }
}

/// Alamofire's parameter encoders are open classes: a subclass can change how parameters are encoded.
private final class UppercasingEncoder: JSONParameterEncoder, @unchecked Sendable {
    override func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        var request = try super.encode(parameters, into: request)
        request.httpBody = request.httpBody.map { Data(String(decoding: $0, as: UTF8.self).uppercased().utf8) }
        return request
    }
}

@Suite struct OpenEncoderTests {
    @Test func aParameterEncoderSubclassIsUsed() throws {
        let encoder: any ParameterEncoder = UppercasingEncoder()
        let request = try encoder.encode(["name": "value"], into: URLRequest(url: "http://127.0.0.1/", method: .post))
        #expect(request.httpBody.map { String(decoding: $0, as: UTF8.self) } == #"{"NAME":"VALUE"}"#)
        let result: AFResult<Int> = .success(1)
        #expect(try result.get() == 1)
    }
}
