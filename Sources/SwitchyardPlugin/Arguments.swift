/// Options a plugin reads from its command line (the manifest's `args`), e.g. `--user alice`.
public enum PluginArguments {
    /// The value after `flag`, or nil.
    public static func value(_ flag: String) -> String? {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// Whether `flag` is present.
    public static func has(_ flag: String) -> Bool { CommandLine.arguments.contains(flag) }
}
