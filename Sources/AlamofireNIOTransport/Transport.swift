/// The transport layer: one HTTP exchange at a time, with no Alamofire policy.
///
/// The connection pool, TLS trust hook, metrics and body streaming arrive with the transport issue.
enum Transport {}
