/// A list that keeps its first element inline and the rest in an array.
///
/// Most lists made per request hold one element: the connection pool's actions for a lease or a
/// finished exchange, and a request's URL requests, tasks, metrics, serializers and their
/// completions. Kept inline, that element costs no allocation, where an `Array` allocates its
/// storage for the first element (and `+` makes another). A second element allocates the array as
/// before. Reading the list as an `Array` (a public property such as `Request.requests`) makes one
/// then.
///
/// Its members are `@inlinable`, so that the package's modules get it specialized for their
/// element types; it is not part of any product's API.
public struct InlineFirstList<Element> {
    @usableFromInline var head: Element?
    @usableFromInline var tail: [Element] = []

    /// An empty list.
    @inlinable
    public init() {}

    /// A list of one element. Prefer it to an array literal where the list is made per request: a
    /// literal passes its elements in an array, which allocates.
    @inlinable
    public init(_ element: Element) {
        head = element
    }

    /// A list of `elements`, in order.
    @inlinable
    public init<Elements: Sequence<Element>>(contentsOf elements: Elements) {
        for element in elements { append(element) }
    }

    /// Adds `element` at the end.
    @inlinable
    public mutating func append(_ element: Element) {
        if head == nil {
            head = element
        } else {
            tail.append(element)
        }
    }

    /// Adds `elements` at the end, in order.
    @inlinable
    public mutating func append(contentsOf elements: InlineFirstList<Element>) {
        guard let first = elements.head else { return }
        append(first)
        tail.append(contentsOf: elements.tail)
    }

    /// Removes every element, keeping no storage.
    @inlinable
    public mutating func removeAll() {
        head = nil
        tail = []
    }

    /// The first element, if any.
    @inlinable
    public var first: Element? { head }

    /// The last element, if any.
    @inlinable
    public var last: Element? { tail.last ?? head }

    /// The elements as an array.
    @inlinable
    public var array: [Element] {
        guard let head else { return [] }
        return [head] + tail
    }

    /// The elements transformed by `transform`, in order, as a list of the same shape.
    @inlinable
    public func mapInline<Transformed>(_ transform: (Element) throws -> Transformed) rethrows -> InlineFirstList<Transformed> {
        var mapped = InlineFirstList<Transformed>()
        guard let head else { return mapped }
        mapped.head = try transform(head)
        mapped.tail = try tail.map(transform)
        return mapped
    }

    /// The elements of `lhs` followed by those of `rhs`.
    @inlinable
    public static func + (lhs: InlineFirstList, rhs: InlineFirstList) -> InlineFirstList {
        var joined = lhs
        joined.append(contentsOf: rhs)
        return joined
    }

    /// Adds the elements of `rhs` at the end of `lhs`.
    @inlinable
    public static func += (lhs: inout InlineFirstList, rhs: InlineFirstList) {
        lhs.append(contentsOf: rhs)
    }
}

extension InlineFirstList: RandomAccessCollection {
    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { head == nil ? 0 : 1 + tail.count }
    @inlinable public var count: Int { endIndex }
    @inlinable public var isEmpty: Bool { head == nil }

    @inlinable
    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < endIndex, "InlineFirstList index out of range")
        return position == 0 ? head.unsafelyUnwrapped : tail[position - 1]
    }
}

extension InlineFirstList: ExpressibleByArrayLiteral {
    @inlinable
    public init(arrayLiteral elements: Element...) {
        for element in elements { append(element) }
    }
}

extension InlineFirstList: Equatable where Element: Equatable {
    @inlinable
    public static func == (lhs: InlineFirstList, rhs: InlineFirstList) -> Bool {
        lhs.elementsEqual(rhs)
    }
}

extension InlineFirstList: Sendable where Element: Sendable {}
