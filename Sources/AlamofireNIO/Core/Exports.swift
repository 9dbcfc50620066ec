// What `import AlamofireNIO` brings with it, as `import Alamofire` does: Foundation (and on Linux
// FoundationNetworking, where URLRequest and HTTPURLResponse live), and the metrics types, which
// live with the loading layer that gathers them (its other declarations are the package's own).
@_exported public import AlamofireNIOLoading
@_exported public import Foundation

#if canImport(FoundationNetworking)
@_exported public import FoundationNetworking
#endif
