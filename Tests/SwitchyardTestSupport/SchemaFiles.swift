import SwitchyardSystem
package import SwitchyardSpec
import SwitchyardProtocol

extension SchemaValidator {
    /// A validator over the schema files in `directory` (`Protocol/schema`).
    package convenience init(directory: String) {
        self.init { name in try JSONParser.parse(try FileSystem.readFile("\(directory)/\(name)")) }
    }
}
