import Foundation

/// The page's files (HTML, CSS, JavaScript modules), read once at start from the target's resources and served from
/// memory: no build step, and nothing outside this list is ever served.
struct PageFiles: Sendable {
    struct File: Sendable {
        let contentType: String
        let bytes: [UInt8]
    }

    let files: [String: File]

    /// Why the page cannot be served.
    struct Missing: Error, CustomStringConvertible {
        let looked: [String]
        var description: String {
            "the studio's page files are missing (looked in \(looked.joined(separator: ", "))); reinstall switchyard-studio with its SwitchyardStudio_SwitchyardStudio.resources folder beside it, or pass --page DIR"
        }
    }

    static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "json": "application/json",
    ]

    /// Loads every file of `directory` (or of the resources beside the executable) with a known type.
    static func load(from directory: String?) throws -> PageFiles {
        let candidates = directory.map { [$0] } ?? resourceCandidates()
        for candidate in candidates {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: candidate),
                names.contains("index.html")
            else { continue }
            var files: [String: File] = [:]
            for name in names {
                guard let type = contentTypes[(name as NSString).pathExtension],
                    let data = FileManager.default.contents(atPath: "\(candidate)/\(name)")
                else { continue }
                files[name] = File(contentType: type, bytes: [UInt8](data))
            }
            return PageFiles(files: files)
        }
        throw Missing(looked: candidates)
    }

    /// SwiftPM copies the target's resources into a bundle folder beside the built executables.
    private static func resourceCandidates() -> [String] {
        let bundle = "SwitchyardStudio_SwitchyardStudio.resources/Page"
        var folders: [String] = []
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent().path {
            folders.append("\(executable)/\(bundle)")
        }
        folders.append("\(Bundle.main.bundlePath)/\(bundle)")
        return folders
    }
}
