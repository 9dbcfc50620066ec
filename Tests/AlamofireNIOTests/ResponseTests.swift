import AlamofireNIO
import Foundation
import HTTPBinServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct DataResponseTests {
    struct Failure: Error, Equatable {}

    func response(_ result: Result<Int, AFError>) throws -> AFDataResponse<Int> {
        let request = try URLRequest(url: "https://example.com/a", method: .get, headers: [.accept("x/y")])
        let http = HTTPURLResponse(url: URL(string: "https://example.com/a")!, statusCode: 200, httpVersion: nil, headerFields: ["B": "2"])
        return DataResponse(
            request: request, response: http, data: Data("body".utf8), metrics: nil, serializationDuration: 0.5, result: result)
    }

    @Test func transformsKeepEverythingButTheResult() throws {
        let ok = try response(.success(2))
        #expect(ok.map { $0 * 10 }.value == 20)
        #expect(ok.map { $0 * 10 }.data == Data("body".utf8))
        #expect(ok.tryMap { _ in throw Failure() }.error is Failure)
        let failed = try response(.failure(.explicitlyCancelled))
        #expect(failed.mapError { _ in Failure() }.error == Failure())
        #expect(failed.tryMapError { _ -> Failure in throw Failure() }.error is Failure)
        #expect(failed.tryMapError { _ in Failure() }.error is Failure)
        #expect(failed.value == nil)
    }

    @Test func descriptionsFollowAlamofiresLayout() throws {
        let ok = try response(.success(2))
        #expect(ok.description == "success(2)")
        #expect(
            ok.debugDescription == """
                [Request]: GET https://example.com/a
                    [Headers]:
                        Accept: x/y
                    [Body]: None
                [Response]:
                    [Status Code]: 200
                    [Headers]:
                        B: 2
                    [Body]: body
                [Network Duration]: None
                [Serialization Duration]: 0.5s
                [Result]: success(2)
                """)
    }
}

@Suite struct AFErrorTests {
    @Test func helpersReadTheirCases() {
        let status = AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 418))
        #expect(status.responseCode == 418 && status.isResponseValidationError && !status.isSessionTaskError)
        let type = AFError.responseValidationFailed(
            reason: .unacceptableContentType(acceptableContentTypes: ["a/b"], responseContentType: "c/d"))
        #expect(type.acceptableContentTypes == ["a/b"] && type.responseContentType == "c/d")
        let encoding = AFError.responseSerializationFailed(reason: .stringSerializationFailed(encoding: .utf8))
        #expect(encoding.failedStringEncoding == .utf8)
        let move = AFError.downloadedFileMoveFailed(
            error: URLError(.cannotOpenFile), source: URL(fileURLWithPath: "/a"), destination: URL(fileURLWithPath: "/b"))
        #expect(move.sourceURL?.path == "/a" && move.destinationURL?.path == "/b")
        #expect((move.underlyingError as? URLError)?.code == .cannotOpenFile)
        let multipart = AFError.multipartEncodingFailed(reason: .bodyPartFileIsDirectory(at: URL(fileURLWithPath: "/dir")))
        #expect(multipart.url?.path == "/dir" && multipart.isMultipartEncodingError)
        #expect(AFError.invalidURL(url: "x y").urlConvertible as? String == "x y")
    }

    /// Alamofire's texts, and its printing of the failure reasons (their case, not a sentence).
    @Test func descriptionsAreAlamofires() {
        #expect(AFError.explicitlyCancelled.errorDescription == "Request explicitly cancelled.")
        #expect(AFError.explicitlyCancelled.localizedDescription == "Request explicitly cancelled.")
        #expect(
            AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 404)).errorDescription
                == "Response status code was unacceptable: 404.")
        #expect(
            AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength).errorDescription
                == "Response could not be serialized, input data was nil or zero length.")
        #expect(
            AFError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host: "example.com")).errorDescription
                == "Server trust evaluation failed due to reason: A ServerTrustEvaluating value is required for host example.com but none was found."
        )
        #expect(
            AFError.serverTrustEvaluationFailed(reason: .revocationPolicyCreationFailed).errorDescription
                == "Server trust evaluation failed due to reason: Attempting to create a revocation policy failed.")
        #expect(
            AFError.responseValidationFailed(
                reason: .unacceptableContentType(acceptableContentTypes: ["a/b", "c/d"], responseContentType: "e/f")
            )
            .errorDescription == "Response Content-Type \"e/f\" does not match any acceptable types: a/b,c/d.")
        #expect("\(AFError.ResponseSerializationFailureReason.inputFileNil)" == "inputFileNil")
        #expect("\(AFError.ResponseValidationFailureReason.unacceptableStatusCode(code: 500))" == "unacceptableStatusCode(code: 500)")
        #expect("\(AFError.ParameterEncodingFailureReason.missingURL)" == "missingURL")
    }

    @Test func everyCaseDescribesItself() {
        let underlying = URLError(.timedOut)
        let errors: [AFError] = [
            .createUploadableFailed(error: underlying), .createURLRequestFailed(error: underlying),
            .downloadedFileMoveFailed(error: underlying, source: URL(fileURLWithPath: "/a"), destination: URL(fileURLWithPath: "/b")),
            .explicitlyCancelled, .invalidURL(url: "x"), .multipartEncodingFailed(reason: .outputStreamWriteFailed(error: underlying)),
            .parameterEncodingFailed(reason: .missingURL),
            .parameterEncoderFailed(reason: .missingRequiredComponent(.httpMethod(rawValue: "BREW"))),
            .requestAdaptationFailed(error: underlying), .requestRetryFailed(retryError: underlying, originalError: underlying),
            .responseValidationFailed(reason: .dataFileNil), .responseSerializationFailed(reason: .inputDataNilOrZeroLength),
            .serverTrustEvaluationFailed(reason: .noCertificatesFound), .sessionDeinitialized, .sessionInvalidated(error: nil),
            .sessionTaskFailed(error: underlying), .urlRequestValidationFailed(reason: .bodyDataInGETRequest(Data())),
        ]
        let descriptions = errors.compactMap(\.errorDescription)
        #expect(descriptions.count == errors.count)
        #expect(Set(descriptions).count == errors.count)
    }
}

@Suite struct SerializationEdgeTests {
    @Test func explicitEncodingThatDoesNotFitFails() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/bytes/64?seed=1")).serializingString(encoding: .utf8).response
            #expect(response.error?.failedStringEncoding == .utf8)
        }
    }

    @Test func wildcardAndMissingContentTypes() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let wildcard = await AF.request(server.url("/json")).validate(contentType: ["application/*"]).serializingData().result
            #expect((try? wildcard.get()) != nil)
            // /drip has no Content-Type problem; /bytes is application/octet-stream.
            let mismatch = await AF.request(server.url("/bytes/10")).validate(contentType: ["text/*"]).serializingData().response
            #expect(mismatch.error?.responseContentType == "application/octet-stream")
            let empty = await AF.request(server.url("/status/204")).validate(contentType: ["text/plain"]).serializingData().result
            #expect((try? empty.get()) == Data())
        }
    }

    @Test func automaticallyCancellingFollowsTheAwaitingTask() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = AF.request(server.url("/hold/never"))
            let awaiting = Task { await request.serializingData(automaticallyCancelling: true).response }
            try await server.waitUntil { $0.totalRequests == 1 }
            awaiting.cancel()
            #expect(await awaiting.value.error?.isExplicitlyCancelledError == true)
            #expect(request.isCancelled)
        }
    }

    @Test func googleXSSIPrefixIsStripped() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let prefixed = server.url(
                "/base64/" + Data(")]}',\n{\"a\":1}".utf8).base64EncodedString().replacingOccurrences(of: "/", with: "_"))
            let value = try await AF.request(prefixed).serializingData(dataPreprocessor: GoogleXSSIPreprocessor()).value
            #expect(String(decoding: value, as: UTF8.self) == "{\"a\":1}")
        }
    }
}
