public import SwitchyardProtocol

/// One element of a screen's content (Protocol/README.md §21), as the host receives it.
public struct ScreenElement: Sendable, Equatable {
    /// The element as JSON: `{"type": "text", "text": "…"}`.
    public let json: JSONValue

    init(_ type: ScreenVocabulary.ElementType, _ members: JSONObject = [:]) {
        var object: JSONObject = ["type": .string(type.rawValue)]
        for (key, value) in members { object[key] = value }
        json = .object(object)
    }
}

/// What a screen's builder takes: an element (``Text``, ``List``, ``Button``…), or several (a ``ForEach`` of them).
public protocol ScreenComponent: Sendable {
    /// The elements it stands for, in order.
    var screenElements: [ScreenElement] { get }
}

/// Builds a screen's content in SwiftUI's style:
///
/// ```swift
/// Screen("TodoList", title: "Todos") {
///     List { ForEach(todos) { Row($0.title).action(.open, ["id": $0.id]) } }
///     Button("New todo", style: .primary, action: .create)
/// }
/// ```
@resultBuilder
public enum ScreenBuilder {
    /// One element, or the elements of a ``ForEach``.
    public static func buildExpression(_ component: some ScreenComponent) -> [ScreenElement] {
        component.screenElements
    }
    /// The elements top to bottom.
    public static func buildBlock(_ parts: [ScreenElement]...) -> [ScreenElement] { parts.flatMap { $0 } }
    /// An `if` without `else`.
    public static func buildOptional(_ part: [ScreenElement]?) -> [ScreenElement] { part ?? [] }
    /// The `if` branch of an `if`/`else`.
    public static func buildEither(first part: [ScreenElement]) -> [ScreenElement] { part }
    /// The `else` branch of an `if`/`else`.
    public static func buildEither(second part: [ScreenElement]) -> [ScreenElement] { part }
    /// A `for` loop.
    public static func buildArray(_ parts: [[ScreenElement]]) -> [ScreenElement] { parts.flatMap { $0 } }
}

/// What a ``List`` holds: rows (gathered into sections of their own) and ``Section``s.
public protocol ListComponent: Sendable {
    /// The rows and sections it stands for, in order.
    var listItems: [ListItem] { get }
}

/// What a ``Section`` holds: ``Row``s, or a ``ForEach`` of them.
public protocol RowComponent: Sendable {
    /// The rows it stands for, in order.
    var rows: [Row] { get }
}

/// A row or a section of a list, as ``ListBuilder`` collects them.
public enum ListItem: Sendable, Equatable {
    case row(Row)
    case section(Section)
}

/// Builds a ``List``'s rows and sections.
@resultBuilder
public enum ListBuilder {
    /// A row, a section, or the rows of a ``ForEach``.
    public static func buildExpression(_ component: some ListComponent) -> [ListItem] { component.listItems }
    /// The rows and sections top to bottom.
    public static func buildBlock(_ parts: [ListItem]...) -> [ListItem] { parts.flatMap { $0 } }
    /// An `if` without `else`.
    public static func buildOptional(_ part: [ListItem]?) -> [ListItem] { part ?? [] }
    /// The `if` branch of an `if`/`else`.
    public static func buildEither(first part: [ListItem]) -> [ListItem] { part }
    /// The `else` branch of an `if`/`else`.
    public static func buildEither(second part: [ListItem]) -> [ListItem] { part }
    /// A `for` loop.
    public static func buildArray(_ parts: [[ListItem]]) -> [ListItem] { parts.flatMap { $0 } }
}

/// Builds a ``Section``'s rows.
@resultBuilder
public enum RowBuilder {
    /// A row, or the rows of a ``ForEach``.
    public static func buildExpression(_ component: some RowComponent) -> [Row] { component.rows }
    /// The rows top to bottom.
    public static func buildBlock(_ parts: [Row]...) -> [Row] { parts.flatMap { $0 } }
    /// An `if` without `else`.
    public static func buildOptional(_ part: [Row]?) -> [Row] { part ?? [] }
    /// The `if` branch of an `if`/`else`.
    public static func buildEither(first part: [Row]) -> [Row] { part }
    /// The `else` branch of an `if`/`else`.
    public static func buildEither(second part: [Row]) -> [Row] { part }
    /// A `for` loop.
    public static func buildArray(_ parts: [[Row]]) -> [Row] { parts.flatMap { $0 } }
}

/// One component per element of a sequence, as SwiftUI's `ForEach`: `ForEach(todos) { Row($0.title) }`. It holds
/// rows in a ``List`` or a ``Section``, and elements in a screen.
public struct ForEach<Content: Sendable>: Sendable {
    /// What the closure made, one per element.
    public let items: [Content]

    /// Calls `content` with each element of `data`, in order.
    public init<Data: Sequence>(_ data: Data, content: (Data.Element) throws -> Content) rethrows {
        items = try data.map(content)
    }
}

extension ForEach: ScreenComponent where Content: ScreenComponent {
    /// The elements of every item, in order.
    public var screenElements: [ScreenElement] { items.flatMap(\.screenElements) }
}

extension ForEach: ListComponent where Content: ListComponent {
    /// The rows and sections of every item, in order.
    public var listItems: [ListItem] { items.flatMap(\.listItems) }
}

extension ForEach: RowComponent where Content: RowComponent {
    /// The rows of every item, in order.
    public var rows: [Row] { items.flatMap(\.rows) }
}

extension Screen {
    /// A screen drawn from data (§21): its name (what a shell without a renderer for data maps to a view), the
    /// navigation bar's title, its props, and its content, built as SwiftUI views are.
    ///
    /// ```swift
    /// Screen("Todo", title: todo.title, ["id": .string(todo.id)]) {
    ///     Text(todo.title).font(.title)
    ///     Button("Complete", style: .primary, action: "complete", params: ["id": todo.id])
    /// }
    /// ```
    public init(
        _ name: String, title: String? = nil, _ props: JSONObject = [:],
        @ScreenBuilder content: () throws -> [ScreenElement]
    ) rethrows {
        self.init(name, props)
        self.title = title
        self.content = .array(try content().map(\.json))
    }
}
