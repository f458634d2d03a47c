// Drives a fresh demo host (`switchyard run`) through the installed JavaScript control client; run by
// SDKPackageTests from an npm prefix where `switchyard-sdk` is installed. Exits non-zero with what went wrong at the
// first failed check.
//
// usage: node control_client_check.mjs SOCKET EXPECTED_DEFAULT_SOCKET_PATH

import { isDeepStrictEqual } from 'node:util';
import { ControlClient, ControlError, applyTreeChange, defaultSocketPath, step } from 'switchyard-sdk/client';

const [socketPath, expectedDefault] = process.argv.slice(2);

function check(condition, what, got) {
  if (!condition) {
    process.stderr.write(`FAILED: ${what} (got ${JSON.stringify(got)})\n`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

async function expectError(name, call) {
  try {
    await call();
  } catch (error) {
    if (error instanceof ControlError) return error;
    throw error;
  }
  process.stderr.write(`FAILED: expected ${name}, the call succeeded\n`);
  process.exit(1);
}

const instance = (tree, plugin, type) => tree.instances.find((i) => i.plugin === plugin && i.type === type);

check(defaultSocketPath('demo') === expectedDefault, "the default path is the host's", defaultSocketPath('demo'));
const missing = await expectError('connection', () => ControlClient.connect({ path: `${socketPath}.missing` }));
check(missing.kind === 'connection' && missing.message.includes('is `switchyard run` running?'),
  'nothing listening: a connection failure with the hint', missing.message);

const host = await ControlClient.connect({ path: socketPath, timeoutMs: 20_000 });
const notifications = host.notifications();
const nextChange = async () => {
  for (;;) {
    const { value } = await notifications.next();
    if (value.method === 'tree/changed') return value.params;
  }
};

const snapshot = await host.subscribe({ snapshots: false });
check(snapshot.revision === 1 && snapshot.instances[0].plugin === 'main', 'subscribe: the current snapshot', snapshot.revision);
const watcher = await ControlClient.connect({ path: socketPath, timeoutMs: 20_000 });
let held = await watcher.subscribe({ deltas: true });
check(isDeepStrictEqual(held, snapshot), 'subscribe({deltas: true}): the current snapshot', held.revision);
const follower = await ControlClient.connect({ path: socketPath, timeoutMs: 20_000 });
await follower.subscribe({ deltas: true });

// Calls in flight at once each get their own answer.
const [valid, invalid, pings] = await Promise.all([
  host.validate('switchyard://forgot?email=a@b.c'),
  host.validate('switchyard://todos/todo/42'),
  Promise.all(Array.from({ length: 20 }, () => host.ping())),
]);
check(valid.valid && valid.steps.at(-1).route === 'forgotPassword', 'validate: a valid link and its steps', valid);
check(!invalid.valid && invalid.error.code === -32014, 'validate: an invalid link and why', invalid);
check(pings.length === 20 && pings.every((p) => Object.keys(p).length === 0), 'calls in flight at once: 20 pings', pings.length);

const opened = await host.open('switchyard://forgot?email=a@b.c');
check(opened.revision === 2, 'open: applied as revision 2', opened);
const changed = await nextChange();
check(changed.revision === 2 && changed.snapshot === undefined, 'subscribe: tree/changed without the snapshot', changed);
const badLink = await expectError('deepLinkInvalid', () => host.open('switchyard://todos/todo/42'));
check(badLink.kind === 'response' && badLink.code === -32014 && badLink.codeName === 'deepLinkInvalid' && badLink.data.segment === 'todos',
  'open: a typed error with code, name and data', { code: badLink.code, name: badLink.codeName, data: badLink.data });
// Opened with defer, the same link waits for the authenticated root (§13.5); cancelled, it is gone.
const waiting = await host.open('switchyard://todos/todo/42', { defer: true, deferMs: 60000 });
check(waiting.revision === 2 && waiting.deferred.until.root === 'authenticated' && waiting.deferred.until.instance === 1
  && waiting.deferred.deferMs === 60000, 'open({ defer: true }): the link waits for the authenticated root', waiting);
const pendingChange = (await host.nextNotification('deepLink/changed')).params;
check(pendingChange.state === 'pending' && pendingChange.link.id === waiting.deferred.id, 'deepLink/changed: pending', pendingChange);
check((await host.pendingDeepLink()).id === waiting.deferred.id, 'pendingDeepLink: the link waiting');
check((await host.cancelDeepLink(waiting.deferred.id)).url === waiting.deferred.url, 'cancelDeepLink: the link dropped');
check((await host.pendingDeepLink()) === null && (await host.cancelDeepLink()) === null, 'nothing waits any more');

const login = await host.navigate([step('setRoot', 'authenticated', { params: { user: 'alice' } })]);
check(login.revision === 3, 'navigate: a chain applied as revision 3', login);
check((await nextChange()).revision === 3, "subscribe: the chain's change");
const noRoute = await expectError('routeNotFound', () => host.navigate([step('route', 'nowhere')], 1));
check(noRoute.codeName === 'routeNotFound', 'navigate: a typed error', noRoute.message);

await host.open('switchyard://todos/todo/42');
const todos = instance(await host.tree(), 'todos', 'todos');
check(todos.entries.map((e) => e.route).join() === 'todo', 'tree: the opened entry', todos.entries);
check(await host.query('currentRoute', { instance: todos.id }) === 'todo', 'query: the top route');
const dismissed = await host.dismissed(todos.id, todos.entries[0].entry);
check(dismissed.revision === 5, "dismissed: the user's dismissal is a revision", dismissed);
check(instance(await host.tree(), 'todos', 'todos').entries.length === 0, 'dismissed: the entry is gone');

const final = await host.tree();
const first = (await watcher.nextNotification('tree/changed')).params;
check(first.base === held.revision && Array.isArray(first.patch) && first.snapshot === undefined,
  'deltas: tree/changed carries a patch against the held revision', first);
held = applyTreeChange(held, first);
while (held.revision < final.revision) held = applyTreeChange(held, (await watcher.nextNotification('tree/changed')).params);
check(isDeepStrictEqual(held, final), 'deltas: the patched tree equals tree/get', held.revision);
let followed = await follower.nextTree();
while (followed.revision < final.revision) followed = await follower.nextTree();
check(isDeepStrictEqual(followed, final), 'deltas: nextTree() ends with the tree of tree/get', followed.revision);
watcher.close();
follower.close();

const status = await host.status();
check(status.revision === 5, 'status: the revision', status.revision);
check(status.plugins.map((p) => p.name).sort().join() === 'authenticated,main,profile,projects,todos,unauthenticated'
  && status.plugins.every((p) => p.state === 'ready' && p.pid > 0), 'status: every plugin ready with a pid', status.plugins);
const started = await host.startPlugin('todos');
check(started.name === 'todos' && started.state === 'ready', 'startPlugin: a plugin that serves is left alone', started);
const nope = await expectError('invalidParams', () => host.startPlugin('nope'));
check(nope.code === -32602, 'startPlugin: a name the manifest does not have', nope.code);
check((await host.render('mermaid')).text.startsWith('flowchart'), 'render: mermaid');
check(Object.keys(await host.unsubscribe()).length === 0, 'unsubscribe');
const unknown = await expectError('methodNotFound', () => host.call('no/such/method'));
check(unknown.code === -32601, 'an unknown method: methodNotFound', unknown.code);
check(Object.keys(await host.shutdown()).length === 0, 'shutdown: accepted');

// The host goes: the notification stream ends and later calls fail with a connection error.
while (!(await notifications.next()).done) { /* plugin/changed as the plugins stop */ }
const gone = await expectError('connection', () => host.ping());
check(gone.kind === 'connection', 'after the host stopped: a connection failure', gone.message);
