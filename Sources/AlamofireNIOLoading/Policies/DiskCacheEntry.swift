import Crypto
package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// One stored response as ``DiskCacheStore`` keeps it in a file: the URL it answers, its status and
/// headers, its body, and what the cache policy needs to judge it (when it was requested and
/// received, and the request headers its `Vary` names). When it was last used is the file's own
/// modification time.
///
/// The file is written whole and renamed into place, so a reader never sees half of one; it also
/// ends with a SHA-256 digest of the rest, so a file damaged on the disk (or not written by a
/// store at all) is refused as a whole instead of served. The digest is not a signature: whoever
/// can write the folder can write an entry, which is why the folder is its owner's only. Every
/// length is checked against what is left of the file before anything is allocated for it.
package struct DiskCacheEntry: Equatable, Sendable {
    /// A response header (an entry keeps them sorted by name).
    package struct Field: Equatable, Sendable {
        package var name: String
        package var value: String
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    package var url: String
    package var statusCode: Int
    package var headers: [Field]
    package var body: Data
    package var requestTime: Date?
    package var responseTime: Date?
    /// The request headers `Vary` names, by lowercased name, as they were sent.
    package var vary: [String: String]

    package init(
        url: String, statusCode: Int, headers: [Field], body: Data, requestTime: Date? = nil, responseTime: Date? = nil,
        vary: [String: String] = [:]
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.vary = vary
    }

    /// Why a file is not an entry.
    package enum DecodingError: Error, Equatable {
        /// It does not start with this format's mark (another format, or another version of it).
        case unknownFormat
        /// It ends before a length it announced, or goes on after its digest.
        case truncated
        /// Its digest does not match what it holds.
        case damaged
        /// A string in it is not UTF-8.
        case invalidText
    }

    /// The mark every entry file starts with; the last byte is the format's version.
    static let magic: [UInt8] = Array("AFNIO-C".utf8) + [1]
    static let digestLength = 32

    // MARK: Encoding

    /// The entry as a file's bytes.
    package func encoded() -> Data {
        var bytes = Data()
        bytes.reserveCapacity(body.count + 256 + headers.count * 48)
        bytes.append(contentsOf: Self.magic)
        append(UInt8((requestTime != nil ? 1 : 0) | (responseTime != nil ? 2 : 0)), to: &bytes)
        append((requestTime?.timeIntervalSinceReferenceDate ?? 0).bitPattern, to: &bytes)
        append((responseTime?.timeIntervalSinceReferenceDate ?? 0).bitPattern, to: &bytes)
        append(UInt64(bitPattern: Int64(statusCode)), to: &bytes)
        append(url, to: &bytes)
        append(UInt32(headers.count), to: &bytes)
        for field in headers {
            append(field.name, to: &bytes)
            append(field.value, to: &bytes)
        }
        append(UInt32(vary.count), to: &bytes)
        for (name, value) in vary.sorted(by: { $0.key < $1.key }) {
            append(name, to: &bytes)
            append(value, to: &bytes)
        }
        append(UInt64(body.count), to: &bytes)
        bytes.append(body)
        return Self.sealed(bytes)
    }

    /// `content` followed by its digest, as an entry file ends.
    package static func sealed(_ content: Data) -> Data {
        var sealed = content
        sealed.append(contentsOf: SHA256.hash(data: content))
        return sealed
    }

    private func append<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private func append(_ text: String, to bytes: inout Data) {
        let utf8 = Array(text.utf8)
        append(UInt32(utf8.count), to: &bytes)
        bytes.append(contentsOf: utf8)
    }

    // MARK: Decoding

    /// Reads an entry from a file's bytes.
    package init(decoding data: Data) throws(DecodingError) {
        guard data.count >= Self.magic.count, data.prefix(Self.magic.count).elementsEqual(Self.magic) else {
            throw .unknownFormat
        }
        guard data.count >= Self.magic.count + Self.digestLength else { throw .truncated }
        let contentEnd = data.startIndex + data.count - Self.digestLength
        guard SHA256.hash(data: data[data.startIndex..<contentEnd]).elementsEqual(data[contentEnd...]) else {
            throw .damaged
        }
        var reader = Reader(data: data, position: data.startIndex + Self.magic.count, end: contentEnd)
        let present: UInt8 = try reader.integer()
        let requestTime = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.integer()))
        let responseTime = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.integer()))
        let statusCode = Int(Int64(bitPattern: try reader.integer()))
        let url = try reader.text()
        var headers: [Field] = []
        for _ in 0..<(try reader.count()) { headers.append(Field(try reader.text(), try reader.text())) }
        var vary: [String: String] = [:]
        for _ in 0..<(try reader.count()) { vary[try reader.text()] = try reader.text() }
        let bodyLength: UInt64 = try reader.integer()
        let body = try reader.bytes(bodyLength)
        guard reader.position == contentEnd else { throw .truncated }
        self.init(
            url: url, statusCode: statusCode, headers: headers, body: body,
            requestTime: present & 1 != 0 ? requestTime : nil, responseTime: present & 2 != 0 ? responseTime : nil, vary: vary)
    }

    /// A cursor over a file's bytes that refuses to read past `end`.
    private struct Reader {
        let data: Data
        var position: Data.Index
        let end: Data.Index

        mutating func bytes(_ count: UInt64) throws(DecodingError) -> Data {
            guard count <= UInt64(end - position) else { throw .truncated }
            defer { position += Int(count) }
            return Data(data[position..<position + Int(count)])
        }

        mutating func integer<Integer: FixedWidthInteger>() throws(DecodingError) -> Integer {
            let raw = try bytes(UInt64(MemoryLayout<Integer>.size))
            var value = Integer.zero
            for (shift, byte) in raw.enumerated() { value |= Integer(truncatingIfNeeded: byte) << (shift * 8) }
            return value
        }

        /// A count of items that follow, each at least 8 bytes long (two lengths): more than the
        /// bytes left could hold is a lie, refused before a loop allocates for it.
        mutating func count() throws(DecodingError) -> Int {
            let count: UInt32 = try integer()
            guard UInt64(count) * 8 <= UInt64(end - position) else { throw .truncated }
            return Int(count)
        }

        mutating func text() throws(DecodingError) -> String {
            let length: UInt32 = try integer()
            guard let text = String(validating: try bytes(UInt64(length)), as: UTF8.self) else { throw .invalidText }
            return text
        }
    }
}

extension DiskCacheEntry {
    /// The entry of an HTTP response with the cache policy's `userInfo` (see ``CachePolicy``); nil
    /// for a response that is not HTTP's.
    package init?(_ cached: CachedURLResponse, url: String) {
        guard let response = cached.response as? HTTPURLResponse else { return nil }
        let fields = (response.allHeaderFields as? [String: String] ?? [:]).sorted { $0.key < $1.key }.map { Field($0.key, $0.value) }
        self.init(
            url: url, statusCode: response.statusCode, headers: fields, body: cached.data,
            requestTime: cached.userInfo?[CachePolicy.requestTimeKey] as? Date,
            responseTime: cached.userInfo?[CachePolicy.responseTimeKey] as? Date,
            vary: cached.userInfo?[CachePolicy.varyKey] as? [String: String] ?? [:])
    }

    /// The entry as the `CachedURLResponse` the cache policy judges and serves; nil when its URL
    /// or headers cannot make an `HTTPURLResponse`.
    package var cachedResponse: CachedURLResponse? {
        guard let url = URL(string: url) else { return nil }
        var fields: [String: String] = [:]
        for field in headers { fields[field.name] = field.value }
        guard let response = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: fields) else {
            return nil
        }
        var userInfo: [AnyHashable: Any] = [CachePolicy.varyKey: vary]
        userInfo[CachePolicy.requestTimeKey] = requestTime
        userInfo[CachePolicy.responseTimeKey] = responseTime
        return CachedURLResponse(response: response, data: body, userInfo: userInfo, storagePolicy: .allowed)
    }
}
