import Foundation

// How `URLEncodedFormEncoder` turns an `Encodable` value into form text, as Alamofire does: every
// value is set into one tree at its coding path (an integer key makes an array, a string key an
// object; setting a key twice replaces it), then the tree is written as `key=value` pairs, each
// level's pairs sorted as text when `alphabetizeKeyValuePairs` is set. The key encoding applies to
// each written key, nested parts included, as Alamofire applies it.

/// The tree a value is encoded into.
enum FormComponent {
    case string(String)
    case array([FormComponent])
    case object([(key: String, value: FormComponent)])

    /// Sets `value` at `path`, making arrays for integer keys and objects for the others.
    mutating func set(_ value: FormComponent, at path: ArraySlice<any CodingKey>) {
        guard let key = path.first else {
            self = value
            return
        }
        let rest = path.dropFirst()
        if let index = key.intValue {
            var array: [FormComponent] = if case .array(let elements) = self { elements } else { [] }
            var child = value
            if !rest.isEmpty {
                child = index < array.count ? array[index] : .array([])
                child.set(value, at: rest)
            }
            if index < array.count { array[index] = child } else { array.append(child) }
            self = .array(array)
        } else {
            var object: [(key: String, value: FormComponent)] = if case .object(let pairs) = self { pairs } else { [] }
            let existing = object.firstIndex { $0.key == key.stringValue }
            var child = value
            if !rest.isEmpty {
                child = existing.map { object[$0].value } ?? .object([])
                child.set(value, at: rest)
            }
            if let existing { object[existing] = (key.stringValue, child) } else { object.append((key.stringValue, child)) }
            self = .object(object)
        }
    }
}

/// The tree being built, shared by every encoder and container of one encoding.
final class FormTree {
    var root = FormComponent.object([])
}

/// The `Encoder` at one coding path of a ``FormTree``.
struct FormValueEncoder: Encoder {
    let tree: FormTree
    let options: URLEncodedFormEncoder
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(FormKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        FormUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(encoder: self)
    }

    /// The encoder one key deeper.
    func nested(_ key: any CodingKey) -> FormValueEncoder {
        FormValueEncoder(tree: tree, options: options, codingPath: codingPath + [key])
    }

    /// Writes `text` at this encoder's path.
    func set(_ text: String) {
        tree.root.set(.string(text), at: codingPath[...])
    }
}

struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        guard let text = encoder.options.nilEncoding.encodeNil() else { return }
        try encode(text, forKey: key)
    }

    /// Every value, primitive or not, goes through a single-value container at its key.
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        var container = FormSingleValueContainer(encoder: encoder.nested(key))
        try container.encode(value)
    }

    // Optionals go through `encodeNil`, so that `NilEncoding` applies to them (the standard library
    // would leave their keys out).
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encodeOptional(value, key) }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, _ key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.nested(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.nested(key).unkeyedContainer()
    }

    /// The superclass's values go into this same object, as Alamofire writes them.
    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder.nested(key) }
}

struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private(set) var count = 0

    init(encoder: FormValueEncoder) {
        self.encoder = encoder
    }

    /// The encoder of the next element.
    private mutating func next() -> FormValueEncoder {
        defer { count += 1 }
        return encoder.nested(FormIndexKey(intValue: count))
    }

    mutating func encodeNil() throws {
        guard let text = encoder.options.nilEncoding.encodeNil() else { return }
        try encode(text)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        var container = FormSingleValueContainer(encoder: next())
        try container.encode(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

    /// As in Alamofire, the superclass writes at the array's own path; an element index is used up.
    mutating func superEncoder() -> any Encoder {
        count += 1
        return encoder
    }
}

struct FormSingleValueContainer: SingleValueEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var hasValue = false

    init(encoder: FormValueEncoder) {
        self.encoder = encoder
    }

    private mutating func write(_ text: String, for value: Any) throws {
        try claim(value)
        encoder.set(text)
    }

    /// A single-value container holds one value: a second is an error, as in `JSONEncoder`.
    private mutating func claim(_ value: Any) throws {
        guard !hasValue else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Attempt to encode value through single value container when previously value already encoded."))
        }
        hasValue = true
    }

    mutating func encodeNil() throws {
        guard let text = encoder.options.nilEncoding.encodeNil() else { return }
        try write(text, for: text)
    }

    mutating func encode(_ value: Bool) throws { try write(encoder.options.boolEncoding.encode(value), for: value) }
    mutating func encode(_ value: String) throws { try write(value, for: value) }
    mutating func encode(_ value: Double) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Float) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int8) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int16) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int32) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int64) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt8) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt16) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt32) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt64) throws { try write(String(value), for: value) }

    /// `Date` and `Data` in their configured forms, `Decimal` as its text, anything else by its own
    /// `encode(to:)` at this path.
    mutating func encode<T: Encodable>(_ value: T) throws {
        switch value {
        case let date as Date:
            if let text = try encoder.options.dateEncoding.encode(date) { return try write(text, for: value) }
        case let data as Data:
            if let text = try encoder.options.dataEncoding.encode(data) { return try write(text, for: value) }
        case let decimal as Decimal:
            return try write(String(describing: decimal), for: value)
        default:
            break
        }
        try claim(value)
        try value.encode(to: encoder)
    }
}

/// Keys for array elements, in coding paths.
struct FormIndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// Writes a ``FormComponent`` tree as `key=value` pairs joined by `&`.
struct FormSerializer {
    let options: URLEncodedFormEncoder
    let allowedCharacters: CharacterSet

    init(options: URLEncodedFormEncoder) {
        self.options = options
        var allowed = options.allowedCharacters
        allowed.insert(" ")
        self.allowedCharacters = allowed
    }

    /// The root object's pairs.
    func serialize(_ pairs: [(key: String, value: FormComponent)]) -> String {
        joined(pairs.map { serialize($0.value, forKey: $0.key) })
    }

    private func serialize(_ component: FormComponent, forKey key: String) -> String {
        switch component {
        case .string(let value):
            return "\(escape(options.keyEncoding.encode(key)))=\(escape(value))"
        case .array(let elements):
            return joined(elements.enumerated().map { serialize($1, forKey: options.arrayEncoding.encode(key, atIndex: $0)) })
        case .object(let pairs):
            return joined(pairs.map { serialize($0.value, forKey: key + options.keyPathEncoding.encodeKeyPath($0.key)) })
        }
    }

    /// One level's pieces, sorted as text when the encoder alphabetizes.
    private func joined(_ pieces: [String]) -> String {
        (options.alphabetizeKeyValuePairs ? pieces.sorted() : pieces).joined(separator: "&")
    }

    private func escape(_ text: String) -> String {
        options.spaceEncoding.encode(text.addingPercentEncoding(withAllowedCharacters: allowedCharacters) ?? text)
    }
}
