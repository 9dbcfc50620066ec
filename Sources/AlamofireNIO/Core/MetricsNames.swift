public import AlamofireNIOLoading

#if canImport(FoundationNetworking)
/// Alamofire's name for a request's metrics. FoundationNetworking's `URLSessionTaskMetrics` class
/// cannot be created on Linux, so AlamofireNIO's metrics are `TaskMetrics` values; this name,
/// declared by a module that imports FoundationNetworking, shadows Foundation's for code that
/// imports AlamofireNIO, so `let metrics: URLSessionTaskMetrics? = response.metrics` and an
/// `EventMonitor`'s `request(_:didGatherMetrics: URLSessionTaskMetrics)` mean AlamofireNIO's type.
public typealias URLSessionTaskMetrics = TaskMetrics

/// Alamofire's name for one exchange's metrics: `TransactionMetrics` (see ``URLSessionTaskMetrics``).
public typealias URLSessionTaskTransactionMetrics = TransactionMetrics
#endif
