public import SwitchyardProtocol

// The elements of the screen vocabulary (Protocol/README.md §21), named as SwiftUI names them. Each becomes the JSON
// the host checks against the route's declared actions before the screen lands in the tree.

/// A value an action sends as a fixed param: a `String`, an `Int`, a `Double`, a `Bool` or any `JSONValue`, so
/// `["id": todo.id]` reads as a dictionary of the app's own values.
public protocol ScreenValue: Sendable {
    /// The value as JSON.
    var screenValue: JSONValue { get }
}

extension String: ScreenValue {
    /// A JSON string.
    public var screenValue: JSONValue { .string(self) }
}
extension Int: ScreenValue {
    /// A JSON integer.
    public var screenValue: JSONValue { .int(Int64(self)) }
}
extension Int64: ScreenValue {
    /// A JSON integer.
    public var screenValue: JSONValue { .int(self) }
}
extension Double: ScreenValue {
    /// A JSON number.
    public var screenValue: JSONValue { .double(self) }
}
extension Bool: ScreenValue {
    /// A JSON boolean.
    public var screenValue: JSONValue { .bool(self) }
}
extension JSONValue: ScreenValue {
    /// Itself.
    public var screenValue: JSONValue { self }
}

/// The name of an action the route declares (`actions:`): a string literal, or a constant of your own
/// (`extension ActionName { static let open: ActionName = "open" }`, then `.action(.open, …)`).
public struct ActionName: RawRepresentable, ExpressibleByStringLiteral, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
}

/// What a tap sends (`user/action`): a declared action, its fixed params, and the ids of the screen's inputs whose
/// values go with it, each as the param of that name.
func actionJSON(_ name: ActionName, _ params: [String: any ScreenValue], _ inputs: [String]) -> JSONValue {
    var object: JSONObject = ["name": .string(name.rawValue)]
    if !params.isEmpty {
        var fixed = JSONObject()
        for key in params.keys.sorted() { fixed[key] = params[key]?.screenValue }
        object["params"] = .object(fixed)
    }
    if !inputs.isEmpty { object["inputs"] = .array(inputs.map(JSONValue.string)) }
    return .object(object)
}

/// SwiftUI's text styles, largest first.
public enum TextStyle: String, Sendable {
    case title, headline, body, caption
}

/// A line or paragraph of text.
public struct Text: ScreenComponent, Equatable {
    let text: String
    var style: TextStyle?

    /// Text in the body style.
    public init(_ text: String) { self.text = text }

    /// The text in another style.
    public func font(_ style: TextStyle) -> Text {
        var copy = self
        copy.style = style
        return copy
    }

    /// One `text` element.
    public var screenElements: [ScreenElement] {
        var members: JSONObject = ["text": .string(text)]
        if let style { members["style"] = .string(style.rawValue) }
        return [ScreenElement(.text, members)]
    }
}

/// A row of a list: a title, optional subtitle, detail (trailing), badge and symbol, and what a tap sends.
public struct Row: ListComponent, RowComponent, Equatable {
    var members: JSONObject

    /// A row showing `title`, with `subtitle` under it and `detail` at its trailing edge.
    public init(_ title: String, subtitle: String? = nil, detail: String? = nil) {
        members = ["title": .string(title)]
        if let subtitle { members["subtitle"] = .string(subtitle) }
        if let detail { members["detail"] = .string(detail) }
    }

    /// A tap on the row sends `name` with `params` (and the values of `inputs`); the row shows a chevron.
    public func action(_ name: ActionName, _ params: [String: any ScreenValue] = [:], inputs: [String] = []) -> Row {
        with("action", actionJSON(name, params, inputs))
    }
    /// A badge at the trailing edge (a count, "New").
    public func badge(_ text: String) -> Row { with("badge", .string(text)) }
    /// A leading symbol of the documented set (`checkmark.circle`).
    public func symbol(_ name: String) -> Row { with("symbol", .string(name)) }
    /// Shows or hides the chevron (shown by default when the row has an action).
    public func disclosure(_ shown: Bool) -> Row { with("disclosure", .bool(shown)) }

    private func with(_ key: String, _ value: JSONValue) -> Row {
        var copy = self
        copy.members[key] = value
        return copy
    }

    /// Itself, as an item of a list.
    public var listItems: [ListItem] { [.row(self)] }
    /// Itself, as a row of a section.
    public var rows: [Row] { [self] }
}

/// A section of a list: rows under an optional header, with an optional footer.
public struct Section: ListComponent, Equatable {
    let header: String?
    let footer: String?
    let content: [Row]

    /// `Section("Open") { ForEach(open) { Row($0.title) } }`.
    public init(_ header: String? = nil, footer: String? = nil, @RowBuilder rows: () throws -> [Row]) rethrows {
        self.init(header: header, footer: footer, rows: try rows())
    }

    init(header: String?, footer: String?, rows: [Row]) {
        self.header = header
        self.footer = footer
        content = rows
    }

    /// Itself, as an item of a list.
    public var listItems: [ListItem] { [.section(self)] }

    var json: JSONValue {
        var object: JSONObject = [:]
        if let header { object["header"] = .string(header) }
        if let footer { object["footer"] = .string(footer) }
        object["rows"] = .array(content.map { .object($0.members) })
        return .object(object)
    }
}

/// A grouped list (SwiftUI's `List` with the inset grouped style): sections of rows; rows given outside a section
/// make a section of their own.
public struct List: ScreenComponent, Equatable {
    let items: [ListItem]

    /// `List { ForEach(todos) { Row($0.title) } }` or `List { Section("Open") { … } Section("Done") { … } }`.
    public init(@ListBuilder content: () throws -> [ListItem]) rethrows { items = try content() }

    /// One `list` element.
    public var screenElements: [ScreenElement] {
        var sections: [JSONValue] = []
        var loose: [Row] = []
        func flush() {
            if !loose.isEmpty { sections.append(Section(header: nil, footer: nil, rows: loose).json) }
            loose = []
        }
        for item in items {
            switch item {
            case .row(let row): loose.append(row)
            case .section(let section):
                flush()
                sections.append(section.json)
            }
        }
        flush()
        return [ScreenElement(.list, ["sections": .array(sections)])]
    }
}

/// How a ``Button`` looks: filled, red, or text only.
public enum ButtonStyle: String, Sendable {
    case primary, destructive, plain
}

/// A button: a tap sends its action (a declared action of the route) with its params and the values of `inputs`.
public struct Button: ScreenComponent, Equatable {
    let members: JSONObject

    /// `Button("Sign in", style: .primary, action: "signIn", inputs: ["user", "password"])`.
    public init(
        _ title: String, style: ButtonStyle = .plain, symbol: String? = nil, action: ActionName,
        params: [String: any ScreenValue] = [:], inputs: [String] = []
    ) {
        var members: JSONObject = ["title": .string(title)]
        if style != .plain { members["style"] = .string(style.rawValue) }
        if let symbol { members["symbol"] = .string(symbol) }
        members["action"] = actionJSON(action, params, inputs)
        self.members = members
    }

    /// One `button` element.
    public var screenElements: [ScreenElement] { [ScreenElement(.button, members)] }
}

/// A one-line text input; an action that lists its `id` in `inputs` sends the text as the param of that name.
public struct TextField: ScreenComponent, Equatable {
    let members: JSONObject
    let secure: Bool

    /// A text field labelled `label`, holding `text` at first, with `prompt` shown while it is empty.
    public init(_ label: String, id: String, text: String = "", prompt: String? = nil) {
        self.init(label, id: id, text: text, prompt: prompt, secure: false)
    }

    init(_ label: String, id: String, text: String, prompt: String?, secure: Bool) {
        var members: JSONObject = ["id": .string(id), "label": .string(label)]
        if !text.isEmpty { members["value"] = .string(text) }
        if let prompt { members["placeholder"] = .string(prompt) }
        self.members = members
        self.secure = secure
    }

    /// One `textField` (or `secureField`) element.
    public var screenElements: [ScreenElement] { [ScreenElement(secure ? .secureField : .textField, members)] }
}

/// A text input whose text is not shown (a password).
public struct SecureField: ScreenComponent, Equatable {
    let field: TextField

    /// A secure field labelled `label`, with `prompt` shown while it is empty.
    public init(_ label: String, id: String, prompt: String? = nil) {
        field = TextField(label, id: id, text: "", prompt: prompt, secure: true)
    }

    /// One `secureField` element.
    public var screenElements: [ScreenElement] { field.screenElements }
}

/// A switch; an action that lists its `id` sends `true` or `false`.
public struct Toggle: ScreenComponent, Equatable {
    let members: JSONObject

    /// A toggle labelled `label`, on or off at first.
    public init(_ label: String, id: String, isOn: Bool = false) {
        members = ["id": .string(id), "label": .string(label), "value": .bool(isOn)]
    }

    /// One `toggle` element.
    public var screenElements: [ScreenElement] { [ScreenElement(.toggle, members)] }
}

/// One choice of a ``Picker``: the value an action sends, and what the user reads.
public struct PickerOption: Sendable, Equatable {
    let value: String
    let title: String
    /// `PickerOption("high", "High")`.
    public init(_ value: String, _ title: String) {
        self.value = value
        self.title = title
    }
}

/// A choice among options; an action that lists its `id` sends the chosen option's value.
public struct Picker: ScreenComponent, Equatable {
    let members: JSONObject

    /// A picker labelled `label`, with `selection` chosen at first (default: the first option).
    public init(_ label: String, id: String, selection: String? = nil, options: [PickerOption]) {
        var members: JSONObject = [
            "id": .string(id), "label": .string(label),
            "options": .array(options.map { .object(["value": .string($0.value), "title": .string($0.title)]) }),
        ]
        if let selection { members["value"] = .string(selection) }
        self.members = members
    }

    /// One `picker` element.
    public var screenElements: [ScreenElement] { [ScreenElement(.picker, members)] }
}

/// A thin line between elements.
public struct Divider: ScreenComponent, Equatable {
    /// A divider.
    public init() {}
    /// One `divider` element.
    public var screenElements: [ScreenElement] { [ScreenElement(.divider)] }
}

/// Flexible space between elements.
public struct Spacer: ScreenComponent, Equatable {
    /// A spacer.
    public init() {}
    /// One `spacer` element.
    public var screenElements: [ScreenElement] { [ScreenElement(.spacer)] }
}

/// A symbol of the documented set, as SwiftUI's `Image(systemName:)`.
public struct Image: ScreenComponent, Equatable {
    let name: String
    /// `Image(systemName: "checkmark.circle")`.
    public init(systemName: String) { name = systemName }
    /// One `symbol` element.
    public var screenElements: [ScreenElement] { [ScreenElement(.symbol, ["name": .string(name)])] }
}
