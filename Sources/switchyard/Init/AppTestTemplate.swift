/// The generated plugins' app tests: the plugin in its app (`switchyard.json`) over a real host, with the SDK's
/// `AppTest` (Python `switchyard.testing`, Node `switchyard-sdk/testing`), every change of the tree and every
/// notification the plugin receives asserted, as The Composable Architecture's TestStore asserts every state change.
extension PluginTemplate {
    /// The app's tree as `AppTest` writes it (an outline), the stack showing `stack` (its entries' lines) above home.
    func appOutline(_ stack: [String] = [], indent: String) -> String {
        let home = ["root home: \(names.pascal)Home"] + stack
        let lines: [String]
        switch kind {
        case .stack:
            lines = ["\(names.plugin).\(rootType)"] + home.map { "  " + $0 }
        case .tabs:
            lines =
                ["\(names.plugin).\(rootType)", "  tab browse (selected) -> \(stackTarget)"] + home.map { "    " + $0 }
                + ["  tab about: \(names.pascal)About"]
        case .wrapper:
            lines = ["\(names.plugin).\(rootType)", "  child content -> \(stackTarget)"] + home.map { "    " + $0 }
        }
        return lines.map { indent + $0 }.joined(separator: "\n")
    }

    /// The item pushed by the link `item/42`, and the settings sheet: the lines `appOutline` takes.
    var itemLine: String { #"push item {"id":42}: \#(names.pascal)Item {"id":42}"# }
    var settingsLine: String { "modal settings: \(names.pascal)Settings" }

    /// What a link into the stack makes the plugin hear besides the change: for tabs, the tab it passes through is
    /// selected again (a re-tap, `isRepeat`), which an exhaustive test must say too.
    func linkReceived(python: Bool, indent: String) -> String {
        guard kind == .tabs else { return "" }
        let event = "\(names.plugin).\(rootType) tabSelected browse again"
        return "\n" + indent + (python ? "app.expect_received(\"\(event)\")" : "await app.expectReceived('\(event)');")
    }

    var pythonAppTest: String {
        """
        \"\"\"The \(names.plugin) plugin in its app (switchyard.json) over a real host: every change of the tree and every
        notification the plugin receives is asserted (switchyard.testing.AppTest; a change or a notification left
        unasserted fails the test). The `switchyard` CLI must be on the PATH (or named by $SWITCHYARD).
        Run: python3 -m unittest (or pytest)\"\"\"
        import os
        import unittest

        from switchyard.client import ResponseError
        from switchyard.testing import AppTest, AppTestFailure

        MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "switchyard.json")


        class \(names.pascal)AppTest(unittest.TestCase):
            def test_a_link_pushes_an_item_and_the_user_dismisses_the_settings_sheet(self):
                with AppTest(MANIFEST) as app:
                    app.open("switchyard://\(linkPrefix)item/42")
                    app.expect_tree(\"\"\"
        \(appOutline([itemLine], indent: "                "))
                    \"\"\")\(linkReceived(python: true, indent: "            "))
                    app.open("switchyard://\(linkPrefix)settings")
                    app.expect_tree(\"\"\"
        \(appOutline([itemLine, settingsLine], indent: "                "))
                    \"\"\")\(linkReceived(python: true, indent: "            "))
                    app.dismiss("\(stackTarget)")
                    app.expect_tree(\"\"\"
        \(appOutline([itemLine], indent: "                "))
                    \"\"\")
                    app.expect_received("\(stackTarget) dismissed settings (user)")

            def test_the_guard_refuses_item_zero_and_nothing_changes(self):
                with AppTest(MANIFEST) as app:
                    with self.assertRaises(ResponseError) as refused:
                        app.open("switchyard://\(linkPrefix)item/0")
                    self.assertEqual(refused.exception.name, "rejectedByGuard")

            def test_an_unasserted_change_fails_the_test(self):
                with self.assertRaises(AppTestFailure):
                    with AppTest(MANIFEST) as app:
                        app.open("switchyard://\(linkPrefix)item/42")


        if __name__ == "__main__":
            unittest.main()

        """
    }

    var nodeAppTest: String {
        """
        // The \(names.plugin) plugin in its app (switchyard.json) over a real host: every change of the tree and every
        // notification the plugin receives is asserted (switchyard-sdk/testing's AppTest; a change or a notification left
        // unasserted fails the test). The `switchyard` CLI must be on the PATH (or named by $SWITCHYARD). Run: npm test
        import assert from 'node:assert/strict';
        import path from 'node:path';
        import { test } from 'node:test';
        import { fileURLToPath } from 'node:url';
        import { AppTest, AppTestFailure } from 'switchyard-sdk/testing';

        const manifest = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'switchyard.json');

        test('a link pushes an item and the user dismisses the settings sheet', async (t) => {
          const app = await AppTest.start({ manifest });
          t.after(() => app.close({ check: false }));
          await app.open('switchyard://\(linkPrefix)item/42');
          await app.expectTree(`
        \(appOutline([itemLine], indent: "            "))`);\(linkReceived(python: false, indent: "  "))
          await app.open('switchyard://\(linkPrefix)settings');
          await app.expectTree(`
        \(appOutline([itemLine, settingsLine], indent: "            "))`);\(linkReceived(python: false, indent: "  "))
          await app.dismiss('\(stackTarget)');
          await app.expectTree(`
        \(appOutline([itemLine], indent: "            "))`);
          await app.expectReceived('\(stackTarget) dismissed settings (user)');
          await app.close();
        });

        test('an unasserted change fails the test', async (t) => {
          const app = await AppTest.start({ manifest });
          t.after(() => app.close({ check: false }));
          await app.open('switchyard://\(linkPrefix)item/42');
          await assert.rejects(app.close(), AppTestFailure);
        });

        """
    }
}
