import Foundation

/// The `InputStream` of ``DataStreamRequest/asInputStream(bufferSize:)``: the request appends each
/// chunk as it arrives, the reader takes bytes with `read(_:maxLength:)`, which blocks until some
/// arrive, and gets 0 once the request has finished (-1 and `streamError` when it failed).
///
/// Alamofire binds an `OutputStream` to it with `Stream.getBoundStreams`, which Foundation lacks on
/// Linux. Here each chunk is kept until it has been read whole, then reported handled, so a reader
/// that falls behind holds back the request (see ``DataStreamRequest/maximumBufferedBytes``).
/// Closing the stream drops what is left unread.
final class DataStreamInputStream: InputStream {
    // Every stored var is guarded by `condition`; the request and the reader use it from any thread.
    private let condition = NSCondition()
    private var chunks: [(data: Data, handled: @Sendable () -> Void)] = []
    /// Bytes of the first chunk already read.
    private var offset = 0
    private var ended = false
    private var failure: (any Error)?
    private var status: Stream.Status = .notOpen
    /// The buffer size asked for (Alamofire's bound pair's); the back-pressure limit is the request's.
    let bufferSize: Int

    init(bufferSize: Int) {
        self.bufferSize = bufferSize
        super.init(data: Data())
    }

    // MARK: Fed by the request

    /// Appends a chunk; `handled` is called once it has been read whole (or dropped by a close).
    func append(_ data: Data, handled: @escaping @Sendable () -> Void) {
        let accepted = locked { () -> Bool in
            guard status != .closed, !ended, !data.isEmpty else { return false }
            chunks.append((data, handled))
            condition.broadcast()
            return true
        }
        if !accepted { handled() }
    }

    /// The request has finished: a reader gets what is left, then the end (or `error`).
    func finish(error: (any Error)?) {
        locked {
            ended = true
            failure = error
            condition.broadcast()
        }
    }

    // MARK: InputStream

    override func open() {
        locked { if status == .notOpen { status = .open } }
    }

    override func close() {
        let dropped = locked { () -> [@Sendable () -> Void] in
            status = .closed
            defer { chunks.removeAll() }
            condition.broadcast()
            return chunks.map(\.handled)
        }
        dropped.forEach { $0() }
    }

    override var streamStatus: Stream.Status { locked { status } }

    override var streamError: (any Error)? { locked { status == .error ? failure : nil } }

    override var hasBytesAvailable: Bool { locked { status == .open && (!chunks.isEmpty || !ended) } }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>) -> Bool {
        false
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard len > 0 else { return 0 }
        var finished: (@Sendable () -> Void)?
        let count = locked { () -> Int in
            while status == .open, chunks.isEmpty, !ended { condition.wait() }
            guard status == .open || status == .reading else { return status == .atEnd ? 0 : -1 }
            guard let first = chunks.first else {
                status = failure == nil ? .atEnd : .error
                return failure == nil ? 0 : -1
            }
            let count = min(len, first.data.count - offset)
            first.data.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
            }
            offset += count
            if offset == first.data.count {
                finished = first.handled
                chunks.removeFirst()
                offset = 0
            }
            return count
        }
        finished?()
        return count
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }
}
