/// The Node plugin: one CommonJS script on the installed SDK package (`switchyard-sdk`, a dependency in
/// package.json), and a node:test test that runs it as the host does, as a process spoken to in protocol lines.
extension PluginTemplate {
    var nodeFiles: [GeneratedFile] {
        [
            GeneratedFile(path: "package.json", text: nodePackage),
            GeneratedFile(path: "\(names.plugin).js", text: nodePlugin, isExecutable: true),
            GeneratedFile(path: "test/\(names.plugin).test.js", text: nodeTest),
            GeneratedFile(path: "test/app.test.mjs", text: nodeAppTest),
            GeneratedFile(path: "switchyard.json", text: manifest(command: ["node", "\(names.plugin).js"])),
            GeneratedFile(path: "scenario.txt", text: scenario),
            GeneratedFile(path: ".gitignore", text: "node_modules/\n"),
        ]
    }

    /// The SDK from the checkout (a `file:` dependency installs offline; the package is not on a registry).
    private var nodeDependency: String { "file:\(checkout ?? "SWITCHYARD")/Protocol/sdk/node" }

    var nodePackage: String {
        """
        {
          "name": "\(names.plugin)",
          "version": "0.1.0",
          "description": "The \(names.plugin) plugin for Switchyard",
          "private": true,
          "scripts": {"test": "node --test"},
          "dependencies": {"switchyard-sdk": "\(nodeDependency)"},
          "engines": {"node": ">=18"}
        }

        """
    }

    private var nodeKindCoordinator: String {
        switch kind {
        case .stack: return ""
        case .tabs:
            return """


                /**
                 * The app's tab bar: the \(names.plugin) stack in the first tab, a plain screen in the second. The deep links name
                 * the tab a link selects before it continues inside it (browse/item/42).
                 */
                class \(names.pascal)Tabs extends Coordinator {
                  static typeName = '\(rootType)';
                  static kind = 'tabs';
                  // The target is declared, not only returned, so the host can check links into the tab before any instance
                  // exists.
                  static routes = [
                    routes.tab('browse', { deepLink: 'browse', target: '\(names.type)' }),
                    routes.tab('about', { deepLink: 'about' }),
                  ];

                  browse() { return coordinator('\(names.type)'); }
                  about() { return screen('\(names.pascal)About'); }
                }
                """
        case .wrapper:
            return """


                /**
                 * A container around the \(names.plugin) stack (Stinsen's NavigationViewCoordinator): the UI draws the navigation
                 * bar once for it, and deep links pass through it to the stack inside.
                 */
                class \(names.pascal)Navigation extends Coordinator {
                  static typeName = '\(rootType)';
                  static kind = 'wrapper';
                  static routes = [routes.child('content', { target: '\(names.type)' })];

                  content() { return coordinator('\(names.type)'); }
                }
                """
        }
    }

    var nodePlugin: String {
        let extra = kind == .tabs ? "\(names.pascal)Tabs" : kind == .wrapper ? "\(names.pascal)Navigation" : nil
        return """
            #!/usr/bin/env node
            'use strict';
            // The \(names.plugin) plugin for Switchyard. The host starts this script and speaks the protocol (JSON-RPC, one
            // message per line) on its stdin and stdout; the SDK speaks it, so this file only declares coordinators.
            //
            //   npm install && npm test
            //   switchyard run --manifest switchyard.json --script scenario.txt
            const { Plugin, Coordinator, \(kind == .stack ? "" : "coordinator, ")reject, routes, screen } = require('switchyard-sdk');

            /** Stands for a lookup in a database or a web service: asynchronous, as most real ones are. */
            async function findItem(id) { return id >= 1 ? { id } : undefined; }

            /** The \(names.plugin) flow: a home screen, items pushed by id, settings presented over them. */
            class \(names.pascal) extends Coordinator {
              static typeName = '\(names.type)';
              static initial = 'home';
              static routes = [
                routes.root('home'),
                // Declaring `id` an integer makes the host turn the link item/42 into 42 and refuse item/abc before this
                // process is asked.
                routes.push('item', { deepLink: 'item/:id', params: [{ name: 'id', type: 'integer' }] }),
                routes.modal('settings', { deepLink: 'settings' }),
              ];

              // Screen names are what the UI shell maps to views; the plugin's prefix keeps them apart from other plugins'.
              home() { return screen('\(names.pascal)Home'); }

              // A route method may be async: the host's request is answered when its promise settles, and the plugin answers
              // others meanwhile. A guard: reject() fails the whole navigation (rejectedByGuard), the tree stays as it was.
              async item({ id }) {
                const found = await findItem(id);
                if (!found) throw reject(`there is no item ${id}`);
                return screen('\(names.pascal)Item', { id: found.id });
              }

              settings() { return screen('\(names.pascal)Settings'); }
            }\(nodeKindCoordinator)

            const plugin = new Plugin('\(names.plugin)', '0.1.0');
            plugin.register(\(names.pascal));\(extra.map { "\nplugin.register(\($0));" } ?? "")
            plugin.run();

            """
    }

    private var nodeKindTest: String {
        switch kind {
        case .stack: return ""
        case .tabs:
            return """


                test('the tab bar opens the stack in its first tab and a screen in the second', async (t) => {
                  const host = await start(t);
                  const { result } = await host.request('coordinator/create', { instance: 2, type: '\(rootType)', reason: 'new' });
                  assert.deepEqual(result.tabs.map((tab) => tab.route), ['browse', 'about']);
                  assert.deepEqual(result.tabs[0].content, { coordinator: { type: '\(names.type)' } });
                  assert.deepEqual(result.tabs[1].content, { screen: { name: '\(names.pascal)About' } });
                });
                """
        case .wrapper:
            return """


                test("the wrapper's child is the stack", async (t) => {
                  const host = await start(t);
                  const { result } = await host.request('coordinator/create', { instance: 2, type: '\(rootType)', reason: 'new' });
                  assert.deepEqual(result.child, { coordinator: { type: '\(names.type)' } });
                });
                """
        }
    }

    var nodeTest: String {
        """
        'use strict';
        // Tests of the \(names.plugin) plugin. The plugin runs as its own process and each test speaks the protocol to it as the
        // host does, so what passes here is what `switchyard run` sees. Run: npm test
        const assert = require('node:assert/strict');
        const { spawn } = require('node:child_process');
        const path = require('node:path');
        const readline = require('node:readline');
        const { test } = require('node:test');
        const { codes, PROTOCOL_VERSIONS } = require('switchyard-sdk');

        // What the host sends first (Protocol/README.md §3): the versions it speaks, who it is, the plugin's name in the
        // manifest and the limits it enforces.
        const initialize = {
          protocolVersions: PROTOCOL_VERSIONS,
          host: { name: 'test', version: '0' },
          pluginName: '\(names.plugin)',
          limits: {
            maxLineBytes: 1048576, maxMessagesPerSecond: 20000, maxOutstandingRequests: 64, maxInstances: 10000,
            maxStderrBytesPerSecond: 65536, requestTimeoutMs: 5000,
          },
        };

        /** The host's side of one plugin process, as much of it as a test needs: requests and their answers. */
        class Host {
          constructor() {
            this.process = spawn(process.execPath, [path.join(__dirname, '..', '\(names.plugin).js')], { stdio: ['pipe', 'pipe', 'inherit'] });
            this.exited = new Promise((resolve) => this.process.on('exit', (code) => resolve(code)));
            this.waiting = new Map();
            this.nextId = 0;
            readline.createInterface({ input: this.process.stdout }).on('line', (line) => {
              const message = JSON.parse(line);
              const answer = this.waiting.get(message.id); // nothing waits for a log notification
              if (answer) answer(message);
            });
          }

          send(message) { this.process.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n'); }

          request(method, params) {
            const id = ++this.nextId;
            return new Promise((resolve, reject) => {
              // Bounded, so that a plugin that never answers fails the test instead of hanging it.
              const timer = setTimeout(() => reject(new Error(`no answer to ${method} within 10 s`)), 10000);
              this.waiting.set(id, (message) => {
                clearTimeout(timer);
                this.waiting.delete(id);
                resolve(message);
              });
              this.send({ id, method, params });
            });
          }

          /** Closes stdin, as the host does last: the protocol says the plugin then exits. Resolves to its status. */
          close() {
            this.process.stdin.end();
            const timer = setTimeout(() => this.process.kill(), 10000);
            return this.exited.finally(() => clearTimeout(timer));
          }
        }

        /** A plugin process after the handshake, with a stack as instance 1; closed when the test ends, even failed. */
        async function start(t) {
          const host = new Host();
          t.after(() => host.close());
          const { result } = await host.request('initialize', initialize);
          host.send({ method: 'initialized' });
          host.declared = result.coordinators;
          host.created = (await host.request('coordinator/create', { instance: 1, type: '\(names.type)', reason: 'new' })).result;
          return host;
        }

        const route = (host, name, transition, params) =>
          host.request('coordinator/route', { instance: 1, type: '\(names.type)', route: name, transition, params });

        test('the item route declares its deep link and integer id', async (t) => {
          const host = await start(t);
          const item = host.declared.find((type) => type.type === '\(names.type)').routes.find((r) => r.name === 'item');
          assert.equal(item.deepLink, 'item/:id');
          assert.deepEqual(item.params, [{ name: 'id', type: 'integer' }]);
        });

        test('a new stack shows the home screen', async (t) => {
          const host = await start(t);
          assert.deepEqual(host.created.root, { route: 'home', content: { screen: { name: '\(names.pascal)Home' } } });
        });

        test('an item shows its id', async (t) => {
          const host = await start(t);
          const { result } = await route(host, 'item', 'push', { id: 42 });
          assert.deepEqual(result.content, { screen: { name: '\(names.pascal)Item', props: { id: 42 } } });
        });

        test('the guard refuses item 0', async (t) => {
          const host = await start(t);
          const { error } = await route(host, 'item', 'push', { id: 0 });
          assert.equal(error.code, codes.rejectedByGuard);
          assert.equal(error.message, 'there is no item 0');
        });

        test('the plugin exits when the host closes its stdin', async (t) => {
          const host = await start(t);
          assert.equal(await host.close(), 0);
        });\(nodeKindTest)

        """
    }
}
