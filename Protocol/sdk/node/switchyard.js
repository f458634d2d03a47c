'use strict';
// Switchyard plugin SDK for Node.js (standard library only).
//
// Speaks the Switchyard protocol v1 (JSON-RPC 2.0, one JSON object per line) on stdin/stdout; the spec is
// Protocol/README.md. stdout belongs to the protocol: run() points console.log and process.stdout.write at stderr,
// so stray output from plugin code lands in the host log instead of corrupting the stream.

const readline = require('readline');

// The package's major version is the newest protocol version this SDK speaks (Protocol/CHANGES.md).
const { version } = require('./package.json');
const PROTOCOL_VERSIONS = [1];
// How much of a handler's stack goes into the error's data: the answer must stay one protocol line (§6's
// maxLineBytes). The start is kept, where the error and its innermost frames are; stderr gets all of it.
const maxStackLength = 16384;
const codes = {
  parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internalError: -32603,
  unsupportedProtocolVersion: -32002, instanceNotFound: -32015, routeNotFound: -32010, rejectedByGuard: -32013,
  deepLinkInvalid: -32014, compositionError: -32017,
};

class RPCError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** A guard's refusal: the route is not taken and the tree stays as it was. */
const reject = (reason) => new RPCError(codes.rejectedByGuard, reason);
const screen = (name, props) => ({ screen: props ? { name, props } : { name } });
const coordinator = (type, { plugin, params } = {}) => ({
  coordinator: Object.assign({ type }, plugin ? { plugin } : {}, params !== undefined ? { params } : {}),
});

function fits(value, type) {
  switch (type) {
    case 'string': return typeof value === 'string';
    case 'integer': return Number.isInteger(value);
    case 'number': return typeof value === 'number';
    case 'boolean': return typeof value === 'boolean';
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array': return Array.isArray(value);
    default: return true;
  }
}

/**
 * Params that do not fit the route's declared ones are refused with -32602 naming the param (spec §7): the host
 * checks them before it asks, but a plugin must not act on params of the wrong type either.
 */
function checkParams(declaredRoute, params) {
  if (!declaredRoute.params) return;
  const given = params || {};
  for (const { name, type, required } of declaredRoute.params) {
    const value = given[name];
    if (value === undefined || value === null) {
      if (required !== false) throw new RPCError(codes.invalidParams, `route '${declaredRoute.name}' needs param '${name}'`, { field: name });
    } else if (!fits(value, type)) {
      throw new RPCError(codes.invalidParams, `route '${declaredRoute.name}': param '${name}' must be ${type}`, { field: name });
    }
  }
}

/**
 * The params a deep-link pattern captures, as the host reads them (Protocol/README.md §13): `:name` and `{name}` one
 * segment each, `**name` the rest (`**` alone is captured as `**`).
 */
function captures(pattern) {
  const names = [];
  for (const part of pattern.split('/')) {
    if (part.startsWith('**')) names.push(part.slice(2) || '**');
    else if (part.startsWith(':') && part.length > 1) names.push(part.slice(1));
    else if (part.startsWith('{') && part.endsWith('}') && part.length > 2) names.push(part.slice(1, -1));
  }
  return names;
}

/** Whether a function's parameter list is empty and its body does not read `arguments`: it cannot see params. */
function takesNothing(fn) {
  const text = Function.prototype.toString.call(fn);
  return /^[^(]*\(\s*\)/.test(text) && !/\barguments\b/.test(text);
}

const declareParams = (params) => params.map((p) => (typeof p === 'string' ? { name: p, type: 'string' } : p));

function route(name, transition, { deepLink, target, plugin, params, targetParams, actions, transitions, presentation } = {}) {
  const result = { name, transition };
  if (deepLink !== undefined) result.deepLink = deepLink;
  if (params !== undefined) result.params = declareParams(params);
  if (target !== undefined) result.target = plugin ? { plugin, type: target } : { type: target };
  // What the route creates its target with (spec §5): composition checks it against the target type's params.
  if (targetParams !== undefined) result.targetParams = declareParams(targetParams);
  // The actions the route's screen emits (user/action, spec §12.6), handled by Coordinator#action.
  if (actions !== undefined) {
    result.actions = actions.map((a) => (typeof a === 'string' ? { name: a }
      : Object.assign({ name: a.name }, a.params ? { params: declareParams(a.params) } : {})));
  }
  // Other transitions a route step may pick, and the entries' presentation options (spec §12.8).
  if (transitions !== undefined) result.transitions = [...transitions];
  if (presentation !== undefined) result.presentation = { ...presentation };
  return result;
}
const routes = {
  root: (name, options) => route(name, 'root', options),
  push: (name, options) => route(name, 'push', options),
  modal: (name, options) => route(name, 'modal', options),
  fullScreen: (name, options) => route(name, 'fullScreen', options),
  tab: (name, options) => route(name, 'tab', options),
  child: (name, options) => route(name, 'child', options),
};

/**
 * Base class of a coordinator type. Set static `typeName`, `kind` ('stack', 'tabs', 'wrapper'), `routes` and, for a
 * stack, `initial`. For each route define a method named like the route, taking (params, link) and returning
 * screen(...) or coordinator(...), or throwing reject(...). A route without its method is refused at start-up
 * (declarationProblems()), not when it is first taken. Static `creationParams` declares the params an instance is
 * created with (`this.params`), like a route's `params`; a route of another plugin that opens the type declares what
 * it passes with `targetParams`.
 */
class Coordinator {
  constructor(plugin, instance, params) {
    this.plugin = plugin;
    this.instance = instance;
    this.params = params;
    this.state = undefined;
  }
  initialRoot() { return [this.constructor.initial, undefined]; }
  /** For a tabs coordinator: the tab names shown at creation, in order (undefined: every declared tab), spec §12.7. */
  initialTabs() { return undefined; }
  didDestroy() {}
  dismissed(_route, _entry, _reason) {}
  tabSelected(_tab, _isRepeat) {}
  /** An entry became visible again (spec §12.9); overriding it declares the type's `appearance`. */
  appeared(_entry) {}
  /**
   * A screen of this instance emitted a declared action (spec §12.6): return the steps to take from this instance
   * (one chain, one revision), or nothing to change nothing. Throw an RPCError to refuse it.
   */
  action(_name, _params, _context) { return undefined; }
  /** Navigation from this coordinator's logic, sent after the current answer. */
  navigate(steps, done) { this.plugin.deferCall('navigate', { instance: this.instance, steps }, done); }
  /** A read-only question about this instance (spec §12.4: canDismiss, hasParent, presentedCount...), sent later. */
  query(query, route, done, extra = {}) {
    const answer = done && ((result, error) => done(result ? result.result : undefined, error));
    this.plugin.deferCall('tree/query', Object.assign({}, extra, { query, instance: this.instance }, route ? { route } : {}), answer);
  }

  static declaration() {
    const declaration = { type: this.typeName, kind: this.kind || 'stack', routes: this.routes };
    if (this.initial !== undefined) declaration.initialRoute = this.initial;
    // The params an instance is created with (`this.params`), declared: the contract with whoever opens the type.
    if (this.creationParams !== undefined) declaration.params = declareParams(this.creationParams);
    if (this.prototype.appeared !== Coordinator.prototype.appeared) declaration.appearance = true;
    return declaration;
  }

  /**
   * What in the declaration would fail only when the route is taken: a route without its method, a deep-link capture
   * the method cannot receive or the route's params do not declare. One line each, naming the type and the route;
   * Plugin.run() refuses to start with any.
   */
  static declarationProblems() {
    const problems = [];
    const ownDispatch = this.prototype.contentFor !== Coordinator.prototype.contentFor;
    for (const { name, deepLink, params } of this.routes || []) {
      const handler = this.prototype[name];
      const captured = captures(deepLink || '');
      const signature = `${name}(params, link) { ... }`;
      if (ownDispatch) {
        // contentFor is the plugin's own: it decides which routes have content.
      } else if (typeof handler !== 'function') {
        problems.push(`route '${name}' is declared but the class ${this.name} has no method '${name}' (${signature})`);
      } else if (handler === Coordinator.prototype[name] || name === 'constructor') {
        problems.push(`route '${name}' is named like the Coordinator method '${name}', which is not a route's method: rename the route`);
      } else if (captured.length > 0 && takesNothing(handler)) {
        problems.push(`route '${name}': deep-link pattern '${deepLink}' captures '${captured[0]}', but method '${name}' takes no parameters (${signature})`);
      }
      if (params) {
        const names = params.map((p) => p.name);
        const listed = names.length ? `declares only ${names.map((n) => `'${n}'`).join(', ')}` : 'declares no params';
        for (const capture of captured.filter((c) => !names.includes(c))) {
          problems.push(`route '${name}': deep-link pattern '${deepLink}' captures '${capture}', but the route ${listed}: add '${capture}' to params: [...] or drop the capture`);
        }
      }
    }
    return problems.map((problem) => `${this.typeName}: ${problem}`);
  }

  contentFor(name, params, link) {
    const factory = this[name];
    if (typeof factory !== 'function') {
      throw new RPCError(codes.routeNotFound, `${this.constructor.typeName} has no route '${name}'`, { route: name });
    }
    return factory.call(this, params || {}, link);
  }
}

class Plugin {
  constructor(name, version) {
    this.name = name;
    this.version = version;
    this.coordinators = [];
    this.types = new Map();
    this.instances = new Map();
    this.handlers = new Map();
    this.notificationHandlers = new Map();
    this.pending = new Map();
    this.deferred = [];
    this.nextId = 1;
    this.shutdownRequested = false;
    this.write = null;
    // What declarationProblems() found in the registered types: reported at start and refused in initialize.
    this.problems = [];
  }

  request(method, handler) { this.handlers.set(method, handler); }
  notification(method, handler) { this.notificationHandlers.set(method, handler); }

  register(cls) {
    this.types.set(cls.typeName, cls);
    this.coordinators.push(cls.declaration());
    this.problems.push(...cls.declarationProblems());
    if (!this.handlers.has('coordinator/create')) {
      this.handlers.set('coordinator/create', (p) => this.create(p));
      this.handlers.set('coordinator/route', (p) => this.route(p));
      this.handlers.set('coordinator/destroy', (p) => this.destroy(p));
      this.handlers.set('coordinator/action', (p) => this.action(p));
      this.notificationHandlers.set('coordinator/dismissed', (p) => {
        const c = this.instances.get(p.instance);
        if (c) c.dismissed(p.route, p.entry, p.reason);
      });
      this.notificationHandlers.set('coordinator/appeared', (p) => {
        const c = this.instances.get(p.instance);
        if (c) c.appeared(p.entry);
      });
      this.notificationHandlers.set('coordinator/tabSelected', (p) => {
        const c = this.instances.get(p.instance);
        if (c) c.tabSelected(p.tab, p.isRepeat);
      });
    }
    return cls;
  }

  create(params) {
    const cls = this.types.get(params.type);
    if (!cls) throw new RPCError(codes.invalidParams, `no coordinator type '${params.type}'`, { field: 'type' });
    const existing = params.reason === 'restart' ? this.instances.get(params.instance) : undefined;
    const c = existing || new cls(this, params.instance, params.params);
    c.state = params.state;
    this.instances.set(params.instance, c);
    if (params.reason === 'restore') return {};
    const result = {};
    const kind = cls.kind || 'stack';
    if (kind === 'stack') {
      const [rootRoute, rootParams] = c.initialRoot();
      result.root = { route: rootRoute, content: c.contentFor(rootRoute, rootParams) };
      if (rootParams !== undefined) result.root.params = rootParams;
    } else if (kind === 'tabs') {
      const declared = cls.routes.filter((r) => r.transition === 'tab').map((r) => r.name);
      const shown = (c.initialTabs() || declared).filter((name) => declared.includes(name));
      result.tabs = shown.map((name) => ({ route: name, content: c.contentFor(name) }));
    } else {
      const childRoute = cls.routes.find((r) => r.transition === 'child');
      result.child = c.contentFor(childRoute.name);
    }
    if (c.state !== undefined) result.state = c.state;
    return result;
  }

  action(params) {
    const c = this.instances.get(params.instance);
    if (!c) throw new RPCError(codes.instanceNotFound, `no instance ${params.instance}`, { instance: params.instance });
    const steps = c.action(params.action, params.params, { route: params.route, entry: params.entry });
    return steps && steps.length ? { steps } : {};
  }

  route(params) {
    const c = this.instances.get(params.instance);
    if (!c) throw new RPCError(codes.instanceNotFound, `no instance ${params.instance}`, { instance: params.instance });
    const declared = (c.constructor.routes || []).find((r) => r.name === params.route);
    if (declared) checkParams(declared, params.params);
    const result = { content: c.contentFor(params.route, params.params, params.link) };
    if (c.state !== undefined) result.state = c.state;
    return result;
  }

  destroy(params) {
    const c = this.instances.get(params.instance);
    this.instances.delete(params.instance);
    if (c) c.didDestroy();
    return {};
  }

  send(message) {
    message.jsonrpc = '2.0';
    this.write(JSON.stringify(message) + '\n');
  }

  call(method, params, done) {
    const id = `js-${this.nextId++}`;
    if (done) this.pending.set(id, done);
    this.send({ id, method, params: params || {} });
    return id;
  }

  deferCall(method, params, done) { this.deferred.push([method, params, done]); }

  initialize(params) {
    const offered = params.protocolVersions || [];
    const common = PROTOCOL_VERSIONS.filter((v) => offered.includes(v));
    if (common.length === 0) {
      throw new RPCError(codes.unsupportedProtocolVersion,
        `this plugin speaks ${JSON.stringify(PROTOCOL_VERSIONS)}, the host offers ${JSON.stringify(offered)}`,
        { supported: PROTOCOL_VERSIONS });
    }
    if (this.problems.length > 0) {
      // The host logs this message as the handshake failure: the only line a user sees by default.
      throw new RPCError(codes.compositionError, this.problems.join('; '), { problems: this.problems });
    }
    this.pluginName = params.pluginName;
    return { protocolVersion: Math.max(...common), plugin: { name: this.name, version: this.version }, coordinators: this.coordinators };
  }

  dispatch(message) {
    const { method } = message;
    if (method === undefined) {
      const done = this.pending.get(message.id);
      this.pending.delete(message.id);
      // Nobody to answer when a callback or a notification handler throws: the stack goes to the host log.
      if (done) {
        try { done(message.result, message.error); } catch (error) { report(`the callback of request ${message.id}`, error); }
      }
      return;
    }
    const params = message.params || {};
    if (!('id' in message)) {
      if (method === 'exit') process.exit(this.shutdownRequested ? 0 : 1);
      const handler = this.notificationHandlers.get(method);
      if (handler) {
        try { handler(params); } catch (error) { report(method, error); }
      }
      return;
    }
    try {
      let result;
      if (method === '$/ping') result = {};
      else if (method === 'initialize') result = this.initialize(params);
      else if (method === 'shutdown') { this.shutdownRequested = true; result = {}; }
      else if (this.handlers.has(method)) result = this.handlers.get(method)(params);
      else throw new RPCError(codes.methodNotFound, `unknown method '${method}'`, { method });
      this.send({ id: message.id, result: result === undefined ? {} : result });
    } catch (error) {
      let body;
      if (error instanceof RPCError) {
        body = Object.assign({ code: error.code, message: error.message }, error.data !== undefined ? { data: error.data } : {});
      } else {
        // The stack is what makes the bug fixable: it goes with the answer (Protocol/README.md §7) and to stderr,
        // the host log, for the case where the answer is seen by nobody.
        const { name, text, stack } = describe(error);
        body = { code: codes.internalError, message: text, data: { type: name, stack: stack.slice(0, maxStackLength) } };
        report(method, error);
      }
      this.send({ id: message.id, error: body });
    }
  }

  run() {
    // Keep the real stdout for the protocol; console.log and direct writes go to stderr.
    const protocolWrite = process.stdout.write.bind(process.stdout);
    this.write = (text) => protocolWrite(text);
    process.stdout.write = process.stderr.write.bind(process.stderr);
    console.log = console.error;
    // At once, for whoever runs the plugin by hand.
    for (const problem of this.problems) process.stderr.write(`switchyard: error: ${problem}\n`);
    const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (!line.trim()) return;
      let message;
      try { message = JSON.parse(line); } catch (error) {
        process.stderr.write(`switchyard: ignoring a line that is not JSON: ${error.message}\n`);
        return;
      }
      if (message && typeof message === 'object' && !Array.isArray(message)) this.dispatch(message);
      while (this.deferred.length) {
        const [method, params, done] = this.deferred.shift();
        this.call(method, params, done);
      }
    });
    // stdin reached EOF: the host closed it or died. The contract is to exit.
    lines.on('close', () => process.exit(0));
  }
}

/** What was thrown, which need not be an Error: its type's name, a one-line text and the stack (or the value). */
function describe(error) {
  if (error instanceof Error) {
    return { name: error.name, text: `${error.name}: ${error.message}`, stack: error.stack || `${error.name}: ${error.message}` };
  }
  const text = `${typeof error}: ${String(error)}`;
  return { name: typeof error, text, stack: text };
}

/** Writes what failed and the thrown value's stack to stderr (the host log). */
function report(what, error) {
  process.stderr.write(`switchyard: ${what} failed:\n${describe(error).stack}\n`);
}

module.exports = { Plugin, Coordinator, RPCError, reject, screen, coordinator, routes, codes, PROTOCOL_VERSIONS, version };
