import AFSynchronization
public import Foundation
import Synchronization

/// Encodes any `Encodable` value whose root is a keyed container into
/// `application/x-www-form-urlencoded` text, with Alamofire's conventions for arrays (`a[]=1`),
/// nested objects (`a[b]=1`), `Bool`, `Data`, `Date`, key styles, `nil` and spaces.
///
/// Pairs are sorted by key by default, so that output does not depend on `Dictionary` order.
public final class URLEncodedFormEncoder: Sendable {
    /// How array elements are keyed.
    public enum ArrayEncoding: Sendable {
        /// `key[]` (the default).
        case brackets
        /// `key`, repeated.
        case noBrackets
        /// `key[0]`, `key[1]`, …
        case indexInBrackets
        /// The closure's key for each index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        /// The key of the element at `index` of the array under `key`.
        public func encode(_ key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: "\(key)[]"
            case .noBrackets: key
            case .indexInBrackets: "\(key)[\(index)]"
            case .custom(let encoding): encoding(key, index)
            }
        }
    }

    /// How `Bool` values are written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0` (the default).
        case numeric
        /// `true` and `false`.
        case literal

        /// The text for `value`.
        public func encode(_ value: Bool) -> String {
            switch self {
            case .numeric: value ? "1" : "0"
            case .literal: value ? "true" : "false"
            }
        }
    }

    /// How `Data` values are written.
    public enum DataEncoding: Sendable {
        /// `Data`'s own `Encodable` form: an array of bytes.
        case deferredToData
        /// Base64 text (the default).
        case base64
        /// The closure's text.
        case custom(@Sendable (Data) throws -> String)

        /// The text for `data`, or nil to use `Data`'s own encoding.
        public func encode(_ data: Data) throws -> String? {
            switch self {
            case .deferredToData: nil
            case .base64: data.base64EncodedString()
            case .custom(let encoding): try encoding(data)
            }
        }
    }

    /// How `Date` values are written.
    public enum DateEncoding: @unchecked Sendable {
        /// `Date`'s own `Encodable` form: seconds since 2001 (the default).
        case deferredToDate
        /// Seconds since 1970.
        case secondsSince1970
        /// Milliseconds since 1970.
        case millisecondsSince1970
        /// ISO 8601 / RFC 3339, e.g. `2020-01-01T00:00:00Z`.
        case iso8601
        /// The formatter's text. (`DateFormatter` is not `Sendable`; do not mutate it once shared.)
        case formatted(DateFormatter)
        /// The closure's text.
        case custom(@Sendable (Date) throws -> String)

        /// The text for `date`, or nil to use `Date`'s own encoding.
        public func encode(_ date: Date) throws -> String? {
            switch self {
            case .deferredToDate: return nil
            case .secondsSince1970: return String(date.timeIntervalSince1970)
            case .millisecondsSince1970: return String(date.timeIntervalSince1970 * 1000)
            case .iso8601:
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = .withInternetDateTime
                return formatter.string(from: date)
            case .formatted(let formatter): return formatter.string(from: date)
            case .custom(let encoding): return try encoding(date)
            }
        }
    }

    /// How keys are written.
    public enum KeyEncoding: Sendable {
        /// As the type declares them (the default).
        case useDefaultKeys
        /// `oneTwoThree` → `one_two_three`.
        case convertToSnakeCase
        /// `oneTwoThree` → `one-two-three`.
        case convertToKebabCase
        /// `oneTwoThree` → `OneTwoThree`.
        case capitalized
        /// `oneTwoThree` → `ONETWOTHREE`.
        case uppercased
        /// `oneTwoThree` → `onetwothree`.
        case lowercased
        /// The closure's key.
        case custom(@Sendable (String) -> String)

        /// Returns `key` written in this style.
        public func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: key
            case .convertToSnakeCase: Self.separateWords(key, with: "_")
            case .convertToKebabCase: Self.separateWords(key, with: "-")
            case .capitalized: key.prefix(1).uppercased() + key.dropFirst()
            case .uppercased: key.uppercased()
            case .lowercased: key.lowercased()
            case .custom(let encoding): encoding(key)
            }
        }

        /// Splits camel case into lowercase words, as Alamofire (and `JSONEncoder`) do: a word ends
        /// before each capital, and a run of capitals followed by lowercase is a word of its own up to
        /// its last capital (`myURLValue` → `my_url_value`). The first character is taken to start a
        /// word whatever its case (`ABC` → `a_bc`).
        private static func separateWords(_ key: String, with separator: String) -> String {
            let scalars = Array(key.unicodeScalars)
            guard !scalars.isEmpty else { return key }
            func first(_ set: CharacterSet, from start: Int) -> Int? {
                (start..<scalars.count).first { set.contains(scalars[$0]) }
            }
            var words: [Range<Int>] = []
            var wordStart = 0
            var searchStart = 1
            while let upper = first(.uppercaseLetters, from: searchStart) {
                words.append(wordStart..<upper)
                guard let lower = first(.lowercaseLetters, from: upper) else {
                    wordStart = upper
                    break
                }
                if lower == upper + 1 {
                    wordStart = upper
                } else {
                    words.append(upper..<(lower - 1))
                    wordStart = lower - 1
                }
                searchStart = lower + 1
            }
            words.append(wordStart..<scalars.count)
            return words.map { range in
                var word = String.UnicodeScalarView()
                word.append(contentsOf: scalars[range])
                return String(word).lowercased()
            }.joined(separator: separator)
        }
    }

    /// How the keys of nested objects are appended to their parent's key.
    public struct KeyPathEncoding: Sendable {
        /// `parent[child]` (the default).
        public static let brackets = KeyPathEncoding { "[\($0)]" }
        /// `parent.child`.
        public static let dots = KeyPathEncoding { ".\($0)" }

        private let encoding: @Sendable (_ subkey: String) -> String

        /// Creates an encoding that appends each subkey to its parent key as `encoding` returns it.
        ///
        /// - Parameter encoding: what is appended to the parent key for a subkey.
        @preconcurrency public init(encoding: @escaping @Sendable (_ subkey: String) -> String) {
            self.encoding = encoding
        }

        /// Returns what is appended to the parent key for the subkey `keyPath`.
        public func encodeKeyPath(_ keyPath: String) -> String { encoding(keyPath) }
    }

    /// How `nil` values are written.
    public struct NilEncoding: Sendable {
        /// The key is left out (the default).
        public static let dropKey = NilEncoding { nil }
        /// The key is written with an empty value: `key=`.
        public static let dropValue = NilEncoding { "" }
        /// The value is the text `null`.
        public static let null = NilEncoding { "null" }

        private let encoding: @Sendable () -> String?

        /// Creates an encoding that writes `nil` as `encoding` returns it.
        ///
        /// - Parameter encoding: the text for `nil`, or nil to leave the key out.
        @preconcurrency public init(encoding: @escaping @Sendable () -> String?) {
            self.encoding = encoding
        }

        /// The text for a `nil` value, or `nil` to leave the key out.
        public func encodeNil() -> String? { encoding() }
    }

    /// How spaces are written.
    public enum SpaceEncoding: Sendable {
        /// `%20` (the default).
        case percentEscaped
        /// `+`.
        case plusReplaced

        /// `text` with its spaces encoded.
        public func encode(_ text: String) -> String {
            switch self {
            case .percentEscaped: text.replacingOccurrences(of: " ", with: "%20")
            case .plusReplaced: text.replacingOccurrences(of: " ", with: "+")
            }
        }
    }

    /// Why a value could not be encoded.
    public enum Error: Swift.Error {
        /// The value's root is not a keyed container, so it has no keys to write.
        case invalidRootObject(String)
    }

    /// Whether pairs are sorted by key.
    public let alphabetizeKeyValuePairs: Bool
    /// How array elements are keyed.
    public let arrayEncoding: ArrayEncoding
    /// How `Bool` values are written.
    public let boolEncoding: BoolEncoding
    /// How `Data` values are written.
    public let dataEncoding: DataEncoding
    /// How `Date` values are written.
    public let dateEncoding: DateEncoding
    /// How keys are written.
    public let keyEncoding: KeyEncoding
    /// How the keys of nested objects are appended to their parent's key.
    public let keyPathEncoding: KeyPathEncoding
    /// How `nil` values are written.
    public let nilEncoding: NilEncoding
    /// How spaces are written.
    public let spaceEncoding: SpaceEncoding
    /// The `CharacterSet` of allowed (non-escaped) characters; all others are percent-escaped.
    public var allowedCharacters: CharacterSet {
        get { allowedCharacterStorage.withLock { $0 } }
        set { allowedCharacterStorage.withLock { $0 = newValue } }
    }
    private let allowedCharacterStorage: Mutex<CharacterSet>

    /// Creates a form encoder.
    ///
    /// - Parameters:
    ///   - alphabetizeKeyValuePairs: whether pairs are sorted by key (`true`).
    ///   - arrayEncoding: how array elements are keyed (`.brackets`).
    ///   - boolEncoding: how `Bool` is written (`.numeric`).
    ///   - dataEncoding: how `Data` is written (`.base64`).
    ///   - dateEncoding: how `Date` is written (`.deferredToDate`).
    ///   - keyEncoding: how keys are written (`.useDefaultKeys`).
    ///   - keyPathEncoding: how nested keys are written (`.brackets`).
    ///   - nilEncoding: how `nil` is written (`.dropKey`).
    ///   - spaceEncoding: how spaces are written (`.percentEscaped`).
    ///   - allowedCharacters: characters not escaped (`.afURLQueryAllowed`).
    public init(
        alphabetizeKeyValuePairs: Bool = true,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dataEncoding: DataEncoding = .base64,
        dateEncoding: DateEncoding = .deferredToDate,
        keyEncoding: KeyEncoding = .useDefaultKeys,
        keyPathEncoding: KeyPathEncoding = .brackets,
        nilEncoding: NilEncoding = .dropKey,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        allowedCharacters: CharacterSet = .afURLQueryAllowed
    ) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
        self.allowedCharacterStorage = Mutex(allowedCharacters)
    }

    /// The form text of `value`.
    public func encode(_ value: any Encodable) throws -> String {
        let tree = FormTree()
        try value.encode(to: FormValueEncoder(tree: tree, options: self))
        guard case .object(let pairs) = tree.root else {
            throw Error.invalidRootObject(String(describing: tree.root))
        }
        return FormSerializer(options: self).serialize(pairs)
    }

    /// The form text of `value`, as UTF-8 bytes.
    public func encode(_ value: any Encodable) throws -> Data {
        let text: String = try encode(value)
        return Data(text.utf8)
    }
}

extension CharacterSet {
    /// The characters RFC 3986 allows in a query, less the general (`:#[]@`) and sub-delimiters
    /// (`!$&'()*+,;=`), which would change a form's meaning: what Alamofire leaves unescaped.
    public static let afURLQueryAllowed: CharacterSet = {
        CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: ":#[]@!$&'()*+,;="))
    }()
}
