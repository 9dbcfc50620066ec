package import AlamofireNIOLoading

#if canImport(FoundationNetworking)
package import FoundationNetworking
#else
package import Foundation
#endif

extension Session {
    /// A `DataStreamRequest` for an integration that speaks in streams both ways (the OpenAPI
    /// transport): `body`, if any, is written chunk by chunk on each attempt, the response arrives as
    /// a stream with back-pressure, and once a response head has been received no retry is made, as
    /// its consumer has been handed it. The session's interceptor, retriers, trust, cookies and cache
    /// apply as to any request.
    package func streamingExchange(
        _ urlRequest: URLRequest, body: ChunkedRequestBody?, interceptor: (any RequestInterceptor)?
    ) -> DataStreamRequest {
        prepare(
            DataStreamRequest(
                convertible: urlRequest, automaticallyCancelOnStreamError: false, underlyingQueue: rootQueue,
                serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
                shouldAutomaticallyResume: nil, session: self, uploadBody: body, retriesEndAtResponse: true))
    }
}
