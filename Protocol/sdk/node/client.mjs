// A client of a running Switchyard host's control socket (Protocol/README.md §15) for Node.js: an ES module with no
// dependencies. What a UI shell, a test harness or a script uses to drive an app from outside: the same methods as
// the Swift `SwitchyardClient`, any number of calls in flight, notifications as an async iterator.
//
//   import { ControlClient, step } from 'switchyard-sdk/client';
//   const host = await ControlClient.connect({ app: 'demo' });
//   await host.subscribe({ snapshots: false });
//   await host.navigate([step('setRoot', 'authenticated', { params: { user: 'alice' } })]);
//   for await (const { method, params } of host.notifications()) { ... }
//
// Every failure is a ControlError: kind 'response' when the host answered with a typed error (code, name, message,
// data), 'connection', 'protocolViolation' or 'timeout' when there is no answer.
//
// Who is at the other end: Node cannot read a Unix socket's peer credentials (no SO_PEERCRED), so instead of the
// Swift and Python clients' check of the server's uid, this client checks the socket file and its folder before
// connecting: both must belong to this user, and the folder must be writable by nobody else (the host creates it so,
// §15), so only this user or root can have put a listener there. Weaker than SO_PEERCRED (root is not refused, and
// the file is checked, not the process behind it); `checkOwner: false` skips it.

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import os from 'node:os';

/** Protocol/README.md §7. */
export const errorNames = Object.freeze({
  [-32700]: 'parseError', [-32600]: 'invalidRequest', [-32601]: 'methodNotFound', [-32602]: 'invalidParams',
  [-32603]: 'internalError', [-32000]: 'timeout', [-32001]: 'notInitialized', [-32002]: 'unsupportedProtocolVersion',
  [-32003]: 'pluginUnavailable', [-32004]: 'limitExceeded', [-32005]: 'shuttingDown', [-32006]: 'invalidAnswer',
  [-32007]: 'unauthorized', [-32010]: 'routeNotFound', [-32011]: 'notAllowed', [-32012]: 'notOwner',
  [-32013]: 'rejectedByGuard', [-32014]: 'deepLinkInvalid', [-32015]: 'instanceNotFound', [-32016]: 'conflict',
  [-32017]: 'compositionError',
});

/** The Swift client's bound: a snapshot of a big tree is large, but a line without end is a broken host. */
const maxLineLength = 64 << 20;

/** Why a call did not produce a result. `kind`: 'response' (then `code`, `name`, `data`), 'connection',
 * 'protocolViolation' or 'timeout'. */
export class ControlError extends Error {
  /** Made by the client; the message of a 'response' starts with the code's name, so a log line says what failed. */
  constructor(kind, message, { code, data } = {}) {
    super(kind === 'response' ? `${errorNames[code] || 'error'} (${code}): ${message}` : message);
    this.name = 'ControlError';
    this.kind = kind;
    this.code = code;
    this.codeName = code === undefined ? undefined : (errorNames[code] || 'error');
    this.data = data;
    /** The host's own sentence, without the code prefix. */
    this.reason = message;
  }
}

/** Where `switchyard run` listens for `app` when not told otherwise: `$XDG_RUNTIME_DIR/switchyard/APP.sock` when that
 * variable names a folder, else `/tmp/switchyard-UID/APP.sock` (the host's own rule). */
export function defaultSocketPath(app = 'demo') {
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime && fs.statSync(runtime, { throwIfNoEntry: false })?.isDirectory()) return `${runtime}/switchyard/${app}.sock`;
  return `/tmp/switchyard-${process.getuid()}/${app}.sock`;
}

/** One navigation step (Protocol/README.md §12.1), e.g. step('route', 'todo', { params: { id: '42' } }),
 * step('selectTab', undefined, { tab: 'projects' }), step('popLast'). */
export function step(op, route, { tab, params, entry, index, count, keepStack } = {}) {
  const fields = { route, tab, params, entry, index, count, keepStack };
  return Object.assign({ op }, ...Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => ({ [k]: v })));
}

function describeUser(uid) {
  try {
    if (uid === process.geteuid()) return `uid ${uid} (${os.userInfo().username})`;
  } catch { /* no name for this uid */ }
  return `uid ${uid}`;
}

/** The best check Node allows of who put the socket at `socketPath` (see the top of this file). */
function checkOwner(socketPath) {
  const own = process.geteuid();
  const folder = path.dirname(socketPath);
  const refuse = (what, stats) => new ControlError('connection',
    `${what} belongs to ${describeUser(stats.uid)} with mode ${(stats.mode & 0o777).toString(8)}, not to this user ` +
    `(${describeUser(own)}) alone; refusing to talk to the server at ${socketPath}`);
  let socketStats;
  let folderStats;
  try {
    socketStats = fs.lstatSync(socketPath);
    folderStats = fs.lstatSync(folder);
  } catch (error) {
    return new ControlError('connection', `cannot reach the host at ${socketPath}: ${error.code}` +
      (error.code === 'ENOENT' ? ' (is `switchyard run` running? pass another path or app to reach another host)' : ''));
  }
  if (!socketStats.isSocket() || socketStats.uid !== own) return refuse(socketPath, socketStats);
  if (!folderStats.isDirectory() || folderStats.uid !== own || (folderStats.mode & 0o022) !== 0) {
    return refuse(`the folder ${folder}`, folderStats);
  }
  return undefined;
}

/** The tree after a tree/changed notification's params: its snapshot when it has one, else `tree` (the snapshot the
 * watcher holds, not modified) with the patch applied. Throws a ControlError of kind 'protocolViolation' when the patch is not
 * for `tree`'s revision or does not apply. */
export function applyTreeChange(tree, change) {
  if (change.snapshot != null) return change.snapshot;
  if (!Array.isArray(change.patch)) {
    throw new ControlError('protocolViolation', `tree/changed of revision ${change.revision} has neither a snapshot nor a patch`);
  }
  if (tree == null || change.base !== tree.revision) {
    throw new ControlError('protocolViolation', `tree/changed patches revision ${change.base}, but the tree held is revision ${tree?.revision}`);
  }
  return applyPatch(tree, change.patch);
}

/** JSON Patch (RFC 6902): resolves `document` with the operations applied; `document` itself is not modified (only
 * the containers on each operation's path are copied). */
export function applyPatch(document, patch) {
  patch.forEach((operation, index) => {
    try {
      document = applyOperation(document, operation);
    } catch (error) {
      throw new ControlError('protocolViolation', `patch operation ${index} (${operation.op} ${operation.path}) does not apply: ${error.message}`);
    }
  });
  return document;
}

function pointer(path) {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`${path} is not a JSON pointer`);
  return path.slice(1).split('/').map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function lookUp(document, tokens) {
  for (const token of tokens) {
    if (document === null || typeof document !== 'object' || !Object.hasOwn(document, Array.isArray(document) ? Number(token) : token)) {
      throw new Error(`no member ${token}`);
    }
    document = Array.isArray(document) ? document[Number(token)] : document[token];
  }
  return document;
}

function edit(document, tokens, change) {
  if (tokens.length === 0) throw new Error('the whole document cannot be edited in place');
  if (document === null || typeof document !== 'object') throw new Error(`${tokens[0]} is inside a scalar`);
  const copy = Array.isArray(document) ? document.slice() : { ...document };
  const [token, ...rest] = tokens;
  if (rest.length === 0) {
    change(copy, token);
  } else {
    const key = Array.isArray(copy) ? Number(token) : token;
    if (!Object.hasOwn(copy, key)) throw new Error(`no member ${token}`);
    copy[key] = edit(copy[key], rest, change);
  }
  return copy;
}

function add(container, token, value) {
  if (Array.isArray(container)) {
    const position = token === '-' ? container.length : Number(token);
    if (!Number.isInteger(position) || position < 0 || position > container.length) throw new Error(`index ${token} is out of range`);
    container.splice(position, 0, value);
  } else {
    container[token] = value;
  }
}

function remove(container, token) {
  if (Array.isArray(container)) {
    const position = Number(token);
    if (!Number.isInteger(position) || position < 0 || position >= container.length) throw new Error(`no element ${token}`);
    container.splice(position, 1);
  } else {
    if (!Object.hasOwn(container, token)) throw new Error(`no member ${token}`);
    delete container[token];
  }
}

function applyOperation(document, operation) {
  const tokens = pointer(operation.path);
  switch (operation.op) {
    case 'add': return edit(document, tokens, (c, t) => add(c, t, operation.value));
    case 'remove': return edit(document, tokens, remove);
    case 'replace': return edit(document, tokens, (c, t) => { remove(c, t); add(c, t, operation.value); });
    case 'move':
    case 'copy': {
      const source = pointer(operation.from);
      const value = lookUp(document, source);
      if (operation.op === 'move') document = edit(document, source, remove);
      return edit(document, tokens, (c, t) => add(c, t, value));
    }
    case 'test':
      if (JSON.stringify(lookUp(document, tokens)) !== JSON.stringify(operation.value)) throw new Error('test failed');
      return document;
    default: throw new Error(`unknown op ${operation.op}`);
  }
}

/**
 * A connection to a host's control socket (Protocol/README.md §15): what a UI shell, a test harness or a script uses
 * to drive a running app. Any number of calls may be in flight; each resolves to its result or rejects with a
 * ControlError. Notifications queue until a reader takes them (nextNotification, nextTree, notifications).
 */
export class ControlClient {
  /** Connects to the host at `path` (default: `defaultSocketPath(app)`). `timeoutMs` bounds each call (null waits
   * forever). Resolves once connected. */
  static connect({ path: socketPath, app = 'demo', timeoutMs = 30_000, checkOwner: check = true } = {}) {
    const target = socketPath || defaultSocketPath(app);
    const refusal = check ? checkOwner(target) : undefined;
    if (refusal) return Promise.reject(refusal);
    return new Promise((resolve, reject) => {
      const socket = net.createConnection({ path: target });
      const failed = (error) => {
        socket.destroy();
        const hint = ['ENOENT', 'ECONNREFUSED'].includes(error.code)
          ? ' (is `switchyard run` running? pass another path or app to reach another host)' : '';
        reject(new ControlError('connection', `cannot reach the host at ${target}: ${error.code || error.message}${hint}`));
      };
      socket.once('error', failed);
      socket.once('connect', () => {
        socket.off('error', failed);
        resolve(new ControlClient(socket, target, timeoutMs));
      });
    });
  }

  /** Use ControlClient.connect. */
  constructor(socket, socketPath, timeoutMs) {
    this.path = socketPath;
    this.timeoutMs = timeoutMs;
    this.socket = socket;
    this.nextId = 1;
    this.pending = new Map();
    this.queued = [];
    this.heldTree = undefined; // the tree nextTree() patches
    this.waiting = [];
    this.buffer = '';
    this.closed = undefined;
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('error', (error) => this.end(new ControlError('connection', `cannot read from ${socketPath}: ${error.code || error.message}`)));
    socket.on('close', () => this.end(new ControlError('connection', `the host at ${socketPath} closed the connection`)));
  }

  // -- the control methods (Protocol/README.md §15) ------------------------------------------------------------------
  /** Applies a chain of steps atomically; `instance` defaults to the root. Resolves to {revision, instance}. */
  navigate(steps, instance) { return this.call('navigate', instance === undefined ? { steps } : { instance, steps }); }
  /**
   * Applies a deep link (validated first, then one atomic chain). Resolves to {revision, instance}. With
   * `options.defer`, a link that cannot be applied yet waits in the host (at most `options.deferMs`) and is applied once
   * it can be: the answer then has `deferred`, and `deepLink/changed` notifications tell what became of it (§13.5).
   */
  open(url, options) {
    const { defer, deferMs } = options || {};
    return this.call('open', Object.assign({ url }, defer !== undefined ? { defer } : {}, deferMs !== undefined ? { deferMs } : {}));
  }
  /** Drops the deep link waiting (the one with `id`, or any); resolves to it, or null when none was waiting. */
  cancelDeepLink(id) { return this.call('deepLink/cancel', id === undefined ? {} : { id }).then((result) => result.cancelled); }
  /** The deep link waiting now, or null. */
  pendingDeepLink() { return this.call('deepLink/pending', {}).then((result) => result.pending); }
  /** The dry run of open(): changes nothing. Resolves to {valid, steps?, error?}. */
  validate(url) { return this.call('validate', { url }); }
  /** The current snapshot (Protocol/schema/tree.json): {revision, root, instances}. */
  tree() { return this.call('tree/get'); }
  /** The tree as text, json, dot or mermaid: {revision, text}. */
  render(format = 'text') { return this.call('tree/render', { format }); }
  /** A read-only question (§12.4); resolves to its answer (the `result` member). */
  async query(query, { instance, route, params } = {}) {
    const request = Object.assign({ query }, instance === undefined ? {} : { instance }, route === undefined ? {} : { route },
      params === undefined ? {} : { params });
    return (await this.call('tree/query', request)).result;
  }
  /** Asks for tree/changed (with the snapshot unless `snapshots` is false), plugin/changed and coordinator/destroyed
   * notifications. Resolves to the current snapshot, so nothing is missed in between.
   * With `deltas`, each tree/changed carries a JSON Patch against the previous snapshot (`base`, `patch`) instead of
   * the whole tree (or the whole tree when this client could not have the base): nextTree() applies them. */
  async subscribe({ snapshots = true, deltas = false } = {}) {
    this.heldTree = await this.call('tree/subscribe', deltas ? { snapshots, deltas } : { snapshots });
    return this.heldTree;
  }
  /** Waits for the next tree/changed and resolves to the tree it leads to (its snapshot, or the tree this client holds
   * with the patch applied), skipping other notifications. Needs subscribe() with snapshots or deltas. */
  async nextTree({ timeoutMs = this.timeoutMs } = {}) {
    const { params } = await this.nextNotification('tree/changed', { timeoutMs });
    this.heldTree = applyTreeChange(this.heldTree, params);
    return this.heldTree;
  }
  /** Stops the notifications. */
  unsubscribe() { return this.call('tree/unsubscribe'); }
  /** Reports that the user dismissed `entry` of `instance` in the UI. Resolves to {revision, instance}. */
  dismissed(instance, entry) { return this.call('user/dismissed', { instance, entry }); }
  /** Each plugin's state: {revision, plugins: [{name, state, pid?, version?, restarts, error?, ...}], composition, host}. */
  status() { return this.call('host/status'); }
  /** Starts a failed or stopped plugin again (plugin/start, once whatever made it fail is fixed). Resolves to its
   * status once it serves, its instances restored and its placeholders created; rejects with what it failed with. */
  startPlugin(plugin) { return this.call('plugin/start', { plugin }); }
  /** Stops the host and its plugins. */
  shutdown() { return this.call('host/shutdown'); }
  /** `$/ping`: resolves once the host's loop answered, to tell a live host from a stuck one. */
  ping() { return this.call('$/ping'); }

  // -- notifications -------------------------------------------------------------------------------------------------
  /** The next notification {method, params} (of `method`, skipping others, when given), within `timeoutMs` (default:
   * the client's; null waits forever). One reader at a time. */
  nextNotification(method, { timeoutMs = this.timeoutMs } = {}) {
    return new Promise((resolve, reject) => {
      let timer;
      const waiter = {
        method,
        resolve: (value) => { clearTimeout(timer); resolve(value); },
        reject: (error) => { clearTimeout(timer); reject(error); },
      };
      if (timeoutMs != null) {
        timer = setTimeout(() => {
          this.waiting = this.waiting.filter((w) => w !== waiter);
          reject(new ControlError('timeout', `no ${method || 'notification'} from the host at ${this.path} within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      this.waiting.push(waiter);
      this.deliver();
    });
  }

  /** Every notification {method, params}, as they come, until the connection ends. */
  async *notifications() {
    while (true) {
      try {
        yield await this.nextNotification(undefined, { timeoutMs: null });
      } catch (error) {
        if (error instanceof ControlError && error.kind === 'connection') return;
        throw error;
      }
    }
  }

  // -- the envelope --------------------------------------------------------------------------------------------------
  /** Sends a request and resolves to its result; rejects with a ControlError. */
  call(method, params = {}) {
    if (this.closed) return Promise.reject(this.closed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, timer: undefined };
      if (this.timeoutMs != null) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new ControlError('timeout', `no answer to ${method} from the host at ${this.path} within ${this.timeoutMs} ms`));
        }, this.timeoutMs);
      }
      this.pending.set(id, entry);
      this.socket.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  /** Ends the connection: calls in flight fail with kind 'connection', notifications() finishes. */
  close() {
    this.end(new ControlError('connection', `the connection to ${this.path} was closed`));
  }

  /** Internal: splits what the socket read into lines and dispatches each. */
  receive(chunk) {
    // Only the new chunk is searched for the end of the line: a large snapshot arrives in many chunks.
    let newline = chunk.indexOf('\n');
    this.buffer += chunk;
    if (newline >= 0) newline += this.buffer.length - chunk.length;
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim()) this.dispatch(line);
      if (this.closed) return;
      newline = this.buffer.indexOf('\n');
    }
    if (this.buffer.length > maxLineLength) this.end(new ControlError('protocolViolation', `the host sent a line longer than ${maxLineLength} characters`));
  }

  /** Internal: one line from the host: an answer settles its call, a notification waits for its reader. */
  dispatch(line) {
    let message;
    try { message = JSON.parse(line); } catch (error) {
      this.end(new ControlError('protocolViolation', `the host sent an invalid message: ${error.message}`));
      return;
    }
    if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') {
      this.end(new ControlError('protocolViolation', `the host sent an invalid message: ${line.slice(0, 200)}`));
      return;
    }
    if (message.method !== undefined) {
      // The host sends clients no requests; a notification waits for its reader.
      if (message.id === undefined) {
        this.queued.push({ method: message.method, params: message.params || {} });
        this.deliver();
      }
      return;
    }
    const failure = message.error
      ? new ControlError('response', message.error.message, { code: message.error.code, data: message.error.data })
      : undefined;
    if (message.id === null || message.id === undefined) {
      // An error the host could not attribute: its refusal of the connection (-32007 unauthorized) or its answer to
      // a line it could not read. Every call in flight gets it.
      if (failure) this.failAll(failure);
      return;
    }
    const entry = this.pending.get(message.id);
    if (!entry) return; // a late answer to a call that timed out
    this.pending.delete(message.id);
    clearTimeout(entry.timer);
    if (failure) entry.reject(failure); else entry.resolve(message.result);
  }

  /** Internal: hands queued notifications to the readers waiting for them. */
  deliver() {
    while (this.waiting.length) {
      const waiter = this.waiting[0];
      const index = this.queued.findIndex((n) => waiter.method === undefined || n.method === waiter.method);
      if (index < 0) {
        if (this.closed) {
          this.waiting.shift();
          waiter.reject(this.closed);
          continue;
        }
        // Skipped notifications are dropped, as a reader waiting for one method asked.
        if (waiter.method !== undefined) this.queued = [];
        return;
      }
      const [notification] = this.queued.splice(0, index + 1).slice(-1);
      this.waiting.shift();
      waiter.resolve(notification);
    }
  }

  /** Internal: fails every call in flight with `error` (an unattributable error, or the end of the connection). */
  failAll(error) {
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(error);
    }
    this.pending.clear();
  }

  /** Internal: closes the connection once; calls in flight and waiting readers get `error`. */
  end(error) {
    if (this.closed) return;
    this.closed = error;
    this.socket.destroy();
    this.failAll(error);
    this.deliver();
  }
}
