/// Options a plugin reads from its command line (the manifest's `args`), e.g. `--user alice`.
public enum PluginArguments {
    /// The command line of a plugin running inside another process (the in-process test tier), bound around its
    /// handlers: several plugins share that process's `CommandLine.arguments`, so each sees its own here instead.
    @_spi(Testing) @TaskLocal public static var inProcess: [String]?

    /// The plugin's command line: its process's, or the one bound by `inProcess` (the in-process test tier).
    public static var all: [String] { inProcess ?? CommandLine.arguments }

    /// The value after `flag`, or nil.
    public static func value(_ flag: String) -> String? {
        let arguments = all
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// Whether `flag` is present.
    public static func has(_ flag: String) -> Bool { all.contains(flag) }
}
