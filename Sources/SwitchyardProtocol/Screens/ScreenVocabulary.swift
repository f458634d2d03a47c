/// The screen content vocabulary (Protocol/README.md §21): the element types a screen's `content` is made of, the
/// styles and symbols they may name, and the bounds on a screen's size. One definition for the host's check, the
/// SDKs' builders and `check-plugin`; the Studio bundles an icon for each symbol.
public enum ScreenVocabulary {
    /// The element types, as `content[N].type` spells them.
    public enum ElementType: String, Sendable, CaseIterable {
        case text, list, button, textField, secureField, toggle, picker, divider, spacer, symbol

        /// The elements whose value an action may send (`inputs`), and the JSON type of that value.
        public var inputValueType: ParamType? {
            switch self {
            case .textField, .secureField, .picker: .string
            case .toggle: .boolean
            case .text, .list, .button, .divider, .spacer, .symbol: nil
            }
        }
    }

    /// `text.style`: SwiftUI's text styles, largest first; absent means `body`.
    public static let textStyles: Set<String> = ["title", "headline", "body", "caption"]

    /// `button.style`: `primary` (filled), `destructive` (red), `plain` (text only, the default).
    public static let buttonStyles: Set<String> = ["primary", "destructive", "plain"]

    /// The symbols a row, a button, a `symbol` element or a tab item may name: SF Symbols' names for the icons a small
    /// app needs, so a Swift developer knows them and a shell on any platform can bundle them all.
    public static let symbols: Set<String> = [
        "checklist", "folder", "person.crop.circle", "person.2", "gearshape", "house", "tray", "bell",
        "envelope", "lock", "key", "magnifyingglass", "plus", "plus.circle", "checkmark", "checkmark.circle",
        "circle", "xmark", "trash", "pencil", "square.and.arrow.up", "star", "heart", "flag", "calendar", "clock",
        "info.circle", "exclamationmark.triangle", "doc.text", "link", "list.bullet", "ellipsis",
        "rectangle.portrait.and.arrow.right",
    ]

    /// At most this many nodes in one screen's content: every element, section, row and picker option counts.
    public static let maxElements = 1_000

    /// At most this many bytes of JSON in one screen's `content` (as the host writes it, compact).
    public static let maxContentBytes = 64 << 10
}
