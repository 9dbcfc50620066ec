import Foundation

/// One node of the tree an `Encodable` value is turned into before it is written as form text.
/// Containers hand out child nodes that their values fill in later, so the tree is built by reference.
final class FormNode {
    enum Kind: CustomStringConvertible {
        /// Nothing was encoded here (or `nil` with `.dropKey`): the key is left out.
        case empty
        case string(String)
        case array([FormNode])
        case object([(key: String, node: FormNode)])

        var description: String {
            switch self {
            case .empty: "empty"
            case .string(let string): "string(\(string))"
            case .array(let nodes): "array(\(nodes.map(\.kind)))"
            case .object(let pairs): "object(\(pairs.map { "\($0.key): \($0.node.kind)" }))"
            }
        }
    }

    var kind: Kind = .empty

    /// Appends a child under `key`, making this node an object if it is empty.
    func child(forKey key: String) -> FormNode {
        let child = FormNode()
        if case .object(var pairs) = kind {
            pairs.append((key, child))
            kind = .object(pairs)
        } else {
            kind = .object([(key, child)])
        }
        return child
    }

    /// Appends an element, making this node an array if it is empty.
    func appendElement() -> FormNode {
        let child = FormNode()
        if case .array(var nodes) = kind {
            nodes.append(child)
            kind = .array(nodes)
        } else {
            kind = .array([child])
        }
        return child
    }

    var elementCount: Int {
        if case .array(let nodes) = kind { return nodes.count }
        return 0
    }
}

/// The `Encoder` that fills a ``FormNode``; one per node.
struct FormValueEncoder: Encoder {
    let node: FormNode
    let options: URLEncodedFormEncoder
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .empty = node.kind { node.kind = .object([]) }
        return KeyedEncodingContainer(FormKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .empty = node.kind { node.kind = .array([]) }
        return FormUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(encoder: self)
    }

    func encoder(for child: FormNode, key: any CodingKey) -> FormValueEncoder {
        FormValueEncoder(node: child, options: options, codingPath: codingPath + [key])
    }

    /// Encodes any value into this node, giving `Date`, `Data` and `Bool` their configured forms.
    func encodeAny(_ value: any Encodable) throws {
        switch value {
        case let date as Date:
            if let text = try options.dateEncoding.encode(date) { node.kind = .string(text) } else { try date.encode(to: self) }
        case let data as Data:
            if let text = try options.dataEncoding.encode(data) { node.kind = .string(text) } else { try data.encode(to: self) }
        case let decimal as Decimal:
            node.kind = .string(decimal.description)
        case let url as URL:
            node.kind = .string(url.absoluteString)
        default:
            try value.encode(to: self)
        }
    }

    func encodeNil() {
        if let text = options.nilEncoding.encodeNil() { node.kind = .string(text) }
    }
}

struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func child(_ key: Key) -> FormValueEncoder {
        encoder.encoder(for: encoder.node.child(forKey: encoder.options.keyEncoding.encode(key.stringValue)), key: key)
    }

    mutating func encodeNil(forKey key: Key) throws {
        guard encoder.options.nilEncoding.encodeNil() != nil else { return }
        child(key).encodeNil()
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        child(key).node.kind = .string(encoder.options.boolEncoding.encode(value))
    }
    mutating func encode(_ value: String, forKey key: Key) throws { child(key).node.kind = .string(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).encodeAny(value) }

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
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        child(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        child(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.encoder(for: encoder.node.child(forKey: "super"), key: FormIndexKey(stringValue: "super"))
    }
    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.node.elementCount }

    private func next() -> FormValueEncoder {
        encoder.encoder(for: encoder.node.appendElement(), key: FormIndexKey(intValue: count))
    }

    mutating func encodeNil() throws {
        guard encoder.options.nilEncoding.encodeNil() != nil else { return }
        next().encodeNil()
    }

    mutating func encode(_ value: Bool) throws { next().node.kind = .string(encoder.options.boolEncoding.encode(value)) }
    mutating func encode(_ value: String) throws { next().node.kind = .string(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try next().encodeAny(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { next() }
}

struct FormSingleValueContainer: SingleValueEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.encodeNil() }
    mutating func encode(_ value: Bool) throws { encoder.node.kind = .string(encoder.options.boolEncoding.encode(value)) }
    mutating func encode(_ value: String) throws { encoder.node.kind = .string(value) }
    mutating func encode(_ value: Double) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: Float) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: Int) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: Int8) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: Int16) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: Int32) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: Int64) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: UInt) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.node.kind = .string(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeAny(value) }
}

/// Keys for array elements and `super`, in coding paths.
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

/// Writes a tree of ``FormNode``s as `key=value` pairs joined by `&`.
struct FormSerializer {
    let options: URLEncodedFormEncoder

    func serialize(_ pairs: [(key: String, node: FormNode)]) -> String {
        serialize(object: pairs, prefix: nil).joined(separator: "&")
    }

    /// The pairs of an object; `prefix` is the key it is nested under, if any.
    private func serialize(object pairs: [(key: String, node: FormNode)], prefix: String?) -> [String] {
        let keyed = pairs.map { pair in
            (key: prefix.map { $0 + options.keyPathEncoding.encodeKeyPath(pair.key) } ?? pair.key, node: pair.node)
        }
        let ordered = options.alphabetizeKeyValuePairs ? keyed.sorted { $0.key < $1.key } : keyed
        return ordered.flatMap { serialize($0.node, key: $0.key) }
    }

    private func serialize(_ node: FormNode, key: String) -> [String] {
        switch node.kind {
        case .empty:
            return []
        case .string(let value):
            return ["\(escape(key))=\(escape(value))"]
        case .array(let elements):
            // Array order is data, so it is kept even when keys are alphabetized.
            return elements.enumerated().flatMap { index, element in
                serialize(element, key: options.arrayEncoding.encode(key, atIndex: index))
            }
        case .object(let pairs):
            return serialize(object: pairs, prefix: key)
        }
    }

    private func escape(_ text: String) -> String {
        var allowed = options.allowedCharacters
        allowed.insert(" ")
        return options.spaceEncoding.encode(text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text)
    }
}
