import Foundation

/// One part of a `multipart/form-data` body.
struct MultipartPart {
    var name: String
    var filename: String?
    var contentType: String?
    var content: [UInt8]
}

/// Parses `multipart/form-data` bodies (RFC 7578) the way httpbin needs them: each part's name,
/// file name, content type and bytes.
enum Multipart {
    enum ParseError: Error { case malformed(String) }

    /// The boundary parameter of a `multipart/*` content type, without quotes.
    static func boundary(fromContentType contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    static func parse(_ body: [UInt8], boundary: String) throws -> [MultipartPart] {
        let delimiter = Array("--\(boundary)".utf8)
        let crlf: [UInt8] = [13, 10]
        guard var position = firstIndex(of: delimiter, in: body, from: 0) else {
            throw ParseError.malformed("no opening boundary")
        }
        var parts: [MultipartPart] = []
        while true {
            position += delimiter.count
            // "--" after a delimiter closes the body.
            if body[position...].starts(with: [45, 45]) { return parts }
            guard body[position...].starts(with: crlf) else { throw ParseError.malformed("boundary not followed by CRLF") }
            position += 2
            guard let headerEnd = firstIndex(of: crlf + crlf, in: body, from: position) else {
                throw ParseError.malformed("part headers never end")
            }
            let headerText = String(decoding: body[position..<headerEnd], as: UTF8.self)
            let contentStart = headerEnd + 4
            guard let next = firstIndex(of: crlf + delimiter, in: body, from: contentStart) else {
                throw ParseError.malformed("part never ends")
            }
            parts.append(try part(headers: headerText, content: Array(body[contentStart..<next])))
            position = next + 2
        }
    }

    private static func part(headers: String, content: [UInt8]) throws -> MultipartPart {
        var name: String?
        var filename: String?
        var contentType: String?
        for line in headers.components(separatedBy: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            switch pair[0].lowercased() {
            case "content-disposition":
                for parameter in value.split(separator: ";").dropFirst() {
                    let kv = parameter.split(separator: "=", maxSplits: 1)
                    guard kv.count == 2 else { continue }
                    let unquoted = kv[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    switch kv[0].trimmingCharacters(in: .whitespaces).lowercased() {
                    case "name": name = unquoted
                    case "filename": filename = unquoted
                    default: break
                    }
                }
            case "content-type": contentType = value
            default: break
            }
        }
        guard let name else { throw ParseError.malformed("part without a name") }
        return MultipartPart(name: name, filename: filename, contentType: contentType, content: content)
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        let first = needle[0]
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
