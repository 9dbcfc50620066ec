#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Namespaces Alamofire's additions to other types under `.af`.
public struct AlamofireExtension<ExtendedType> {
    /// The extended value.
    public private(set) var type: ExtendedType

    /// Wraps `type` to give it the `.af` additions.
    public init(_ type: ExtendedType) {
        self.type = type
    }
}

/// Types with `.af` additions.
public protocol AlamofireExtended {
    /// The type the `.af` additions extend: the conforming type itself.
    associatedtype ExtendedType
    /// The `.af` namespace of the type's static additions.
    static var af: AlamofireExtension<ExtendedType>.Type { get set }
    /// The `.af` namespace of the value's additions.
    var af: AlamofireExtension<ExtendedType> { get set }
}

extension AlamofireExtended {
    /// The `.af` namespace of the type's static additions.
    public static var af: AlamofireExtension<Self>.Type {
        get { AlamofireExtension<Self>.self }
        set {}
    }

    /// The `.af` namespace of the value's additions.
    public var af: AlamofireExtension<Self> {
        get { AlamofireExtension(self) }
        set {}
    }
}

extension URLSessionConfiguration: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: URLSessionConfiguration {
    /// `URLSessionConfiguration.default` with Alamofire's default headers.
    public static var `default`: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.headers = .default
        return configuration
    }

    /// `URLSessionConfiguration.ephemeral` with Alamofire's default headers.
    public static var ephemeral: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.headers = .default
        return configuration
    }
}
