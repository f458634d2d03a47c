// Exhaustive tests of an app's navigation over a real host, for node:test (The Composable Architecture's TestStore,
// for trees). `AppTest.start({ manifest })` runs `switchyard run` for a manifest and drives it as a UI shell would
// (deep links, steps, the user's dismissals and actions); the test says what became of each: every change of the tree
// (`expectTree`, the tree as an outline; a mismatch fails with a diff) and every notification a plugin received
// (`expectReceived`: dismissals, tab selections, appearances, destroys). In the default, exhaustive mode a change or a
// notification the test did not assert fails it: at the next action, and at `close()`. `exhaustive: false` checks
// only what the test asserts.
//
//   import { test } from 'node:test';
//   import { AppTest } from 'switchyard-sdk/testing';
//
//   test('a deep link pushes the item', async (t) => {
//     const app = await AppTest.start({ manifest: 'switchyard.json' });
//     t.after(() => app.close({ check: false }));
//     await app.open('switchyard://item/42');
//     await app.expectTree(`
//       orders.orders
//         root home: Home
//         push item {"id":42}: Item {"id":42}`);
//     await app.close();
//   });
//
// Failures are `AppTestFailure`s, `AssertionError`s (node:assert). The `switchyard` executable is `switchyard:`, else
// $SWITCHYARD, else the one on the PATH.

import { AssertionError } from 'node:assert';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ControlClient, ControlError } from './client.mjs';

/** What an AppTest found that the test did not say, or said otherwise. */
export class AppTestFailure extends AssertionError {
  /** An AssertionError, so node:test reports it as a failed assertion with `message` (a diff, or what was left). */
  constructor(message) {
    super({ message });
    this.name = 'AppTestFailure';
  }
}

const json = (value) => JSON.stringify(sortKeys(value));
const sortKeys = (value) => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys(value[key])]));
  return value;
};

/**
 * The tree as a test writes it: one line per coordinator (`plugin.type`) and per entry (`transition route params`, then
 * `-> plugin.type` for a coordinator it holds or `: Screen props`), indented by what holds what. No ids and no revision,
 * so an outline stays the same from run to run. The same format as the Python SDK's `switchyard.testing.outline`.
 */
export function outline(snapshot) {
  const nodes = new Map((snapshot.instances || []).map((node) => [node.id, node]));
  const lines = [];
  const visit = (id, depth, level) => {
    const node = nodes.get(id);
    if (!node || level > 1000) return;
    if (depth === 0) lines.push(`${node.plugin}.${node.type}${node.status === 'unavailable' ? ' (unavailable)' : ''}`);
    const entries = [];
    if (node.root) entries.push(['root', node.root]);
    for (const entry of node.entries || []) entries.push([entry.transition, entry]);
    for (const tab of node.tabs || []) entries.push(['tab', tab]);
    if (node.child) entries.push(['child', node.child]);
    for (const [transition, entry] of entries) {
      let text = `${transition} ${entry.route}`;
      if (entry.params !== undefined && entry.params !== null) text += ` ${json(entry.params)}`;
      if (transition === 'tab' && node.selectedTab === entry.route) text += ' (selected)';
      if (entry.badge !== undefined && entry.badge !== null) text += ` [${entry.badge}]`;
      const content = entry.content || {};
      if ('coordinator' in content) {
        const child = nodes.get(content.coordinator) || {};
        text += ` -> ${child.plugin || '?'}.${child.type || '?'}${child.status === 'unavailable' ? ' (unavailable)' : ''}`;
      } else if ('screen' in content) {
        const { name, props } = content.screen;
        text += `: ${name}${props && Object.keys(props).length ? ` ${json(props)}` : ''}`;
      }
      lines.push('  '.repeat(depth + 1) + text);
      if ('coordinator' in content) visit(content.coordinator, depth + 1, level + 1);
    }
  };
  if (snapshot.root !== undefined && snapshot.root !== null) visit(snapshot.root, 0, 0);
  return lines.join('\n');
}

/** An expected outline as written in a test: the indentation common to its lines and blank edge lines dropped. */
function normal(text) {
  const lines = text.split('\n');
  while (lines.length && !lines[0].trim()) lines.shift();
  while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
  const indent = Math.min(...lines.filter((line) => line.trim()).map((line) => line.length - line.trimStart().length));
  return lines.map((line) => line.slice(Number.isFinite(indent) ? indent : 0).trimEnd()).join('\n');
}

/** A line diff of two texts: `-` only in `a`, `+` only in `b`, ` ` in both (a longest common subsequence). */
export function diff(a, b) {
  const x = a ? a.split('\n') : [];
  const y = b ? b.split('\n') : [];
  const table = Array.from({ length: x.length + 1 }, () => new Array(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i -= 1) {
    for (let j = y.length - 1; j >= 0; j -= 1) {
      table[i][j] = x[i] === y[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) { out.push(` ${x[i]}`); i += 1; j += 1; }
    else if (i < x.length && (j === y.length || table[i + 1][j] >= table[i][j + 1])) { out.push(`-${x[i]}`); i += 1; }
    else { out.push(`+${y[j]}`); j += 1; }
  }
  return out.join('\n');
}

/** A real host for one test (see the module's header). */
export class AppTest {
  /**
   * Starts the host for `manifest` (its plugins, the tree) and connects to it; resolves once the app has started.
   * @param {{ manifest: string, exhaustive?: boolean, switchyard?: string, timeoutMs?: number }} options
   */
  static async start({ manifest, exhaustive = true, switchyard, timeoutMs = 20_000 }) {
    const app = new AppTest(manifest, exhaustive, switchyard || process.env.SWITCHYARD || 'switchyard', timeoutMs);
    await app.launch();
    return app;
  }

  /** Use AppTest.start. */
  constructor(manifest, exhaustive, executable, timeoutMs) {
    Object.assign(this, { manifest, exhaustive, executable, timeoutMs });
    this.changes = []; // [{ revision, outline }] not asserted yet
    this.received = []; // notifications the plugins received, not asserted yet
    this.asserted = '';
    this.latest = {};
    this.instances = new Map();
    this.entries = new Map();
    this.stderr = [];
  }

  /** Internal: spawns `switchyard run` on a private socket, waits for "ready", subscribes to the tree and the trace. */
  async launch() {
    this.folder = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-apptest-'));
    const socket = path.join(this.folder, 'app.sock');
    // The host ends with this process even if the test is killed before it can stop it (the CLI's harness hook).
    const env = { ...process.env, SWITCHYARD_EXIT_WITH_PARENT: String(process.pid) };
    this.process = spawn(this.executable, ['run', '--manifest', this.manifest, '--socket', socket], { stdio: ['ignore', 'ignore', 'pipe'], env });
    const ready = new Promise((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new AppTestFailure(`the host did not start within ${this.timeoutMs} ms:\n${this.hostLog()}`)), this.timeoutMs);
      this.process.stderr.setEncoding('utf8');
      this.process.stderr.on('data', (chunk) => {
        text += chunk;
        const lines = text.split('\n');
        text = lines.pop();
        for (const line of lines) {
          this.stderr.push(line);
          if (this.stderr.length > 40) this.stderr.shift();
          if (line.startsWith('switchyard: ready')) { clearTimeout(timer); resolve(); }
        }
      });
      this.process.once('exit', () => { clearTimeout(timer); reject(new AppTestFailure(`the host could not start the app:\n${this.hostLog()}`)); });
      this.process.once('error', (error) => { clearTimeout(timer); reject(new AppTestFailure(`cannot run ${this.executable}: ${error.message}`)); });
    });
    try {
      await ready;
      this.client = await ControlClient.connect({ path: socket, timeoutMs: this.timeoutMs });
      await this.client.call('trace/subscribe', {});
      this.see(await this.client.subscribe());
      this.asserted = outline(this.latest);
    } catch (error) {
      await this.close({ check: false });
      throw error;
    }
  }

  /** The host's last lines on stderr (its log: plugin failures, tracebacks). */
  hostLog() { return this.stderr.join('\n'); }

  /**
   * Stops the host. With `check` (the default; pass false from a hook that runs when the test failed already), a change
   * or a notification left unasserted in exhaustive mode fails the test.
   */
  async close({ check = true } = {}) {
    try {
      if (check && this.exhaustive && this.client) {
        await this.collect();
        this.failIfUnasserted('the test ended');
      }
    } finally {
      if (this.client) this.client.close();
      this.client = undefined;
      if (this.process && this.process.exitCode === null && this.process.signalCode === null) {
        const exited = new Promise((resolve) => this.process.once('exit', resolve));
        this.process.kill('SIGTERM');
        const killer = setTimeout(() => this.process.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      this.process = undefined;
      if (this.folder) fs.rmSync(this.folder, { recursive: true, force: true });
      this.folder = undefined;
    }
  }

  // -- what the user does ----------------------------------------------------------------------------------------------
  /** Opens a deep link (`defer`: it may wait, Protocol/README.md §13.5); resolves to the host's answer. */
  open(url, { defer } = {}) { return this.act(`open ${url}`, (host) => host.open(url, defer === undefined ? undefined : { defer })); }

  /** Applies a chain of steps from `at` (`'plugin.type'`, an instance id, or the root). */
  navigate(steps, at) { return this.act(`navigate ${json(steps)}`, (host) => host.navigate(steps, this.instance(at))); }

  /** The user dismisses `entry` of `at` (default: the top-most entry it shows), as a swipe or a dragged sheet. */
  dismiss(at, entry) {
    const instance = this.required(at);
    const chosen = entry ?? this.topEntry(instance);
    return this.act(`dismiss e${chosen}`, (host) => host.dismissed(instance, chosen));
  }

  /** The user does `action` on the screen of `entry` of `at` (default: its top-most entry). */
  action(at, action, params, entry) {
    const instance = this.required(at);
    const chosen = entry ?? this.topEntry(instance);
    const request = Object.assign({ instance, entry: chosen, action }, params === undefined ? {} : { params });
    return this.act(`action ${action}`, (host) => host.call('user/action', request));
  }

  /** An instance id: `at` itself, the first instance of `'plugin.type'` (depth-first), or undefined (the root). */
  instance(at) {
    if (at === undefined || typeof at === 'number') return at;
    const [plugin, type] = at.split('.');
    const node = (this.latest.instances || []).find((n) => n.plugin === plugin && n.type === type);
    if (!node) throw new AppTestFailure(`no instance of ${at} in the tree:\n${outline(this.latest)}`);
    return node.id;
  }

  /** Internal: `instance(at)`, which must name a coordinator (an action or a dismissal needs one). */
  required(at) {
    const instance = this.instance(at);
    if (instance === undefined) throw new AppTestFailure("name the coordinator: 'plugin.type' or an instance id");
    return instance;
  }

  // -- what the test says ----------------------------------------------------------------------------------------------
  /**
   * The tree after the next change the test has not asserted (waiting for it, for a change a plugin makes on its own) is
   * `expected`, an outline. Not exhaustive: the latest tree, once it is `expected`.
   */
  async expectTree(expected) {
    const wanted = normal(expected);
    let actual;
    if (!this.exhaustive) {
      await this.waitUntil(() => outline(this.latest) === wanted);
      actual = outline(this.latest);
      this.changes = [];
    } else {
      await this.waitUntil(() => this.changes.length > 0);
      if (!this.changes.length) {
        throw new AppTestFailure(`expected a change of the tree, but none came within ${this.timeoutMs} ms; the tree is:\n${outline(this.latest)}`);
      }
      actual = this.changes.shift().outline;
    }
    if (actual !== wanted) {
      throw new AppTestFailure(
        `the tree is not as expected (- expected, + actual):\n${diff(wanted, actual)}\n\nwhat changed (- before, + after):\n${diff(this.asserted, actual)}`);
    }
    this.asserted = actual;
  }

  /**
   * The plugins received these notifications next, in order: `'plugin.type dismissed ROUTE (REASON)'`, `'plugin.type
   * tabSelected TAB'` (`again` after a re-tap), `'plugin.type appeared ROUTE'`, `'plugin.type destroyed'`. Not
   * exhaustive: these, in this order, among what they received.
   */
  async expectReceived(...notifications) {
    await this.waitUntil(() => this.received.length >= notifications.length);
    const received = [...this.received];
    if (this.exhaustive) {
      if (received.slice(0, notifications.length).join('\n') !== notifications.join('\n')) {
        throw new AppTestFailure(`the plugins received other notifications (- expected, + received):\n${diff(notifications.join('\n'), received.join('\n'))}`);
      }
      this.received.splice(0, notifications.length);
      return;
    }
    let position = 0;
    for (const wanted of notifications) {
      while (position < received.length && received[position] !== wanted) position += 1;
      if (position === received.length) throw new AppTestFailure(`the plugins did not receive '${wanted}'; they received:\n${received.join('\n')}`);
      position += 1;
    }
    this.received.splice(0, position);
  }

  /** Forgets the notifications not asserted so far (TCA's `skipReceivedActions`). */
  async skipReceived() {
    await this.collect();
    this.received = [];
  }

  /** The current tree's outline: what to paste into `expectTree` (check it first). */
  async tree() {
    await this.collect();
    return outline(this.latest);
  }

  // -- inside ----------------------------------------------------------------------------------------------------------
  /** Internal: one user action: what came before it must be asserted (exhaustive), then `call` on the client. */
  async act(what, call) {
    await this.collect();
    if (this.exhaustive) this.failIfUnasserted(`before ${what}`);
    const result = await call(this.client);
    await this.collect();
    return result;
  }

  /** Internal: throws when a change or a notification is left unasserted, naming `when` it was noticed. */
  failIfUnasserted(when) {
    const problems = [];
    if (this.changes.length) {
      const now = this.changes[this.changes.length - 1].outline;
      problems.push(`${this.changes.length} change(s) of the tree not asserted (- last asserted, + now):\n${diff(this.asserted, now)}`);
    }
    if (this.received.length) problems.push(`notifications the plugins received, not asserted:\n${this.received.join('\n')}`);
    if (problems.length) throw new AppTestFailure(`${when}, ${problems.join('\n\n')}`);
  }

  /** Internal: reads notifications until `condition` holds or `timeoutMs` passes (the caller then reports). */
  async waitUntil(condition) {
    const deadline = Date.now() + this.timeoutMs;
    await this.collect();
    while (!condition()) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return;
      try {
        const { method, params } = await this.client.nextNotification(undefined, { timeoutMs: remaining });
        this.take(method, params);
      } catch (error) {
        if (error instanceof ControlError && error.kind === 'timeout') return;
        throw error;
      }
      await this.collect();
    }
  }

  /** Takes in every notification the host has sent so far. */
  async collect() {
    await new Promise((resolve) => setImmediate(resolve)); // what the socket has, read
    for (const { method, params } of this.client.queued.splice(0)) this.take(method, params);
  }

  /** Internal: records a notification: a tree change to assert, or a trace record of what a plugin received. */
  take(method, params) {
    if (method === 'tree/changed' && params.snapshot) {
      this.see(params.snapshot);
      this.changes.push({ revision: params.revision, outline: outline(this.latest) });
    } else if (method === 'trace/event') {
      this.trace(params);
    }
  }

  /** Internal: makes `snapshot` the latest tree and learns its instances' and entries' names for the messages. */
  see(snapshot) {
    this.latest = snapshot;
    for (const node of snapshot.instances || []) {
      this.instances.set(node.id, `${node.plugin}.${node.type}`);
      for (const entry of [node.root, node.child, ...(node.entries || []), ...(node.tabs || [])]) {
        if (entry) this.entries.set(entry.entry, entry.route);
      }
    }
  }

  /** Internal: a message the host sent a plugin; each notification becomes a line for `expectReceived`. */
  trace(record) {
    const message = record.message;
    if (record.direction !== 'out' || !message || typeof message !== 'object') return;
    const params = message.params || {};
    const who = this.instances.get(params.instance) || `#${params.instance}`;
    switch (message.method) {
      case 'coordinator/dismissed': this.received.push(`${who} dismissed ${params.route} (${params.reason})`); break;
      case 'coordinator/tabSelected': this.received.push(`${who} tabSelected ${params.tab}${params.isRepeat ? ' again' : ''}`); break;
      case 'coordinator/appeared': this.received.push(`${who} appeared ${this.entries.get(params.entry) || '?'}`); break;
      case 'coordinator/destroy': this.received.push(`${who} destroyed`); break;
      default: break;
    }
  }

  /** Internal: the entry `instance` shows on top: its selected tab, its last entry, its root or its child. */
  topEntry(instance) {
    const node = (this.latest.instances || []).find((n) => n.id === instance);
    if (!node) throw new AppTestFailure(`no instance ${instance} in the tree`);
    if (node.tabs && node.tabs.length) return node.tabs.find((tab) => tab.route === node.selectedTab).entry;
    const top = (node.entries && node.entries.length ? node.entries[node.entries.length - 1] : undefined) || node.root || node.child;
    if (!top) throw new AppTestFailure(`instance ${instance} shows no entry`);
    return top.entry;
  }
}
