'use strict';
// A plugin: its coordinator types, the `coordinator/*` methods served for them (§8), and the handshake (§3).

const { codes, RPCError } = require('./errors');
const { checkParams } = require('./declarations');
const { then, sequence, scopes } = require('./async');
const { Connection } = require('./connection');
const { Coordinator } = require('./coordinator');
const { HandlerSite } = require('./site');

/** The protocol versions this SDK speaks (Protocol/CHANGES.md). */
const PROTOCOL_VERSIONS = Object.freeze([1]);

/**
 * A plugin process: `name` and `version` are what `initialize` reports. Register coordinator types with register(),
 * then call run().
 */
class Plugin extends Connection {
  /** A plugin reporting `name` and `version` in its `initialize` result; it serves nothing until run(). */
  constructor(name, version) {
    super();
    this.name = name;
    this.version = version;
    /** The route table sent in the `initialize` result. */
    this.coordinators = [];
    /** The registered types by name, and the live instances by id. */
    this.types = new Map();
    this.instances = new Map();
    /** The name the manifest gives the plugin (from `initialize`). */
    this.pluginName = undefined;
    // What declarationProblems() found in the registered types: reported at start and refused in initialize.
    this.problems = [];
  }

  /** Registers a Coordinator subclass and serves the coordinator/* methods for it; returns the class. */
  register(cls) {
    this.types.set(cls.typeName, cls);
    this.coordinators.push(cls.declaration());
    this.problems.push(...cls.declarationProblems());
    if (!this.handlers.has('coordinator/create')) {
      this.handlers.set('coordinator/create', (p) => this.create(p));
      this.handlers.set('coordinator/route', (p) => this.route(p));
      this.handlers.set('coordinator/destroy', (p) => this.destroy(p));
      this.handlers.set('coordinator/action', (p) => this.action(p));
      this.handlers.set('coordinator/deepLink', (p) => this.deepLink(p));
      this.notificationHandlers.set('coordinator/dismissed', (p) => this.instances.get(p.instance)?.dismissed(p.route, p.entry, p.reason));
      this.notificationHandlers.set('coordinator/appeared', (p) => this.instances.get(p.instance)?.appeared(p.entry));
      this.notificationHandlers.set('coordinator/tabSelected', (p) => this.instances.get(p.instance)?.tabSelected(p.tab, p.isRepeat));
    }
    return cls;
  }

  /** The live instance `params.instance` names, or an instanceNotFound error. */
  instanceFor(params) {
    const c = this.instances.get(params.instance);
    if (!c) throw new RPCError(codes.instanceNotFound, `no instance ${params.instance}`, { instance: params.instance });
    return c;
  }

  /** `coordinator/create` (§8): a new, restarted or restored instance, and its initial content. */
  create(params) {
    const cls = this.types.get(params.type);
    if (!cls) throw new RPCError(codes.invalidParams, `no coordinator type '${params.type}'`, { field: 'type' });
    const existing = params.reason === 'restart' ? this.instances.get(params.instance) : undefined;
    const c = existing || new cls(this, params.instance, params.params);
    c.state = params.state;
    this.instances.set(params.instance, c);
    if (params.reason === 'restore') return {};
    if (params.reason === 'upgrade') {
      return then(c.migrate(String(params.fromVersion ?? ''), params.state), (state) => {
        c.state = state;
        return withState(c, {});
      });
    }
    return then(this.initialContent(c), (result) => withState(c, result));
  }

  /**
   * What the author's method for `route` returns, checked: a value it throws, or one that is not content, is answered
   * naming the route, the type, the method and its file and line (HandlerSite).
   */
  routeContent(c, route, params, link) {
    const cls = c.constructor;
    const name = cls.prototype.contentFor !== Coordinator.prototype.contentFor ? 'contentFor' : route;
    const scope = scopes.getStore();
    const site = new HandlerSite({
      what: `route '${route}' of ${cls.typeName}`,
      name: `${cls.name}.${name}`,
      fn: cls.prototype[name],
      method: scope ? scope.method : 'coordinator/route',
      expected: 'a screen or a coordinator',
      returns: "return screen('Name', { key: value }) or return coordinator('type')",
      refuse: "throw reject('why') to refuse the route on purpose",
    });
    if (scope) scope.site = site;
    return then(c.contentFor(route, params, link), (content) => {
      if (content === null || typeof content !== 'object' || Array.isArray(content)) {
        const { location, message } = site.returned(content);
        throw new RPCError(codes.internalError, message, { type: 'InvalidContent', ...site.data(location) });
      }
      return content;
    });
  }

  /** A new instance's initial content: a stack's root, a tabs coordinator's tabs (in order), a wrapper's child. */
  initialContent(c) {
    const cls = c.constructor;
    const kind = cls.kind || 'stack';
    if (kind === 'stack') {
      const site = new HandlerSite({
        what: `the initial root of ${cls.typeName}`,
        name: `${cls.name}.initialRoot`,
        fn: cls.prototype.initialRoot,
        method: 'coordinator/create',
        expected: 'a [route, params] pair',
        returns: "return ['route', undefined] (or declare static initial = 'route')",
        refuse: "throw new RPCError(codes.invalidParams, 'why') to refuse the creation",
      });
      const scope = scopes.getStore();
      if (scope) scope.site = site;
      return then(c.initialRoot(), (root) => {
        if (!Array.isArray(root) || typeof root[0] !== 'string') {
          const { location, message } = site.returned(root);
          throw new RPCError(codes.internalError, message, { type: 'InvalidRoot', ...site.data(location) });
        }
        const [rootRoute, rootParams] = root;
        return then(this.routeContent(c, rootRoute, rootParams), (content) => {
          const shown = { route: rootRoute, content };
          if (rootParams !== undefined) shown.params = rootParams;
          return { root: shown };
        });
      });
    }
    if (kind === 'tabs') {
      const declared = cls.routes.filter((r) => r.transition === 'tab').map((r) => r.name);
      return then(c.initialTabs(), (shown) => {
        const names = (shown || declared).filter((name) => declared.includes(name));
        return then(sequence(names, (name) => then(this.routeContent(c, name), (content) => ({ route: name, content }))), (tabs) => ({ tabs }));
      });
    }
    const childRoute = cls.routes.find((r) => r.transition === 'child');
    return then(this.routeContent(c, childRoute.name), (child) => ({ child }));
  }

  /** `coordinator/action` (§12.6): the steps the instance answers to its screen's action. */
  action(params) {
    const c = this.instanceFor(params);
    const cls = c.constructor;
    const site = new HandlerSite({
      what: `action '${params.action}' of ${cls.typeName} (on route '${params.route}')`,
      name: `${cls.name}.action`,
      fn: cls.prototype.action,
      method: 'coordinator/action',
      expected: 'an array of steps or nothing',
      returns: 'return [step, ...] or return null',
      refuse: "throw new RPCError(codes.notAllowed, 'why') to refuse the action",
    });
    const scope = scopes.getStore();
    if (scope) scope.site = site;
    return then(c.action(params.action, params.params, { route: params.route, entry: params.entry }), (steps) => {
      if (steps !== undefined && steps !== null && !Array.isArray(steps)) {
        const { location, message } = site.returned(steps);
        throw new RPCError(codes.internalError, message, { type: 'InvalidSteps', ...site.data(location) });
      }
      return steps && steps.length ? { steps } : {};
    });
  }

  /** `coordinator/route` (§8): what a route shows, its params checked against the declaration first. */
  route(params) {
    const c = this.instanceFor(params);
    const declared = (c.constructor.routes || []).find((r) => r.name === params.route);
    if (declared) checkParams(declared, params.params);
    return then(this.routeContent(c, params.route, params.params, params.link), (content) => withState(c, { content }));
  }

  /** `coordinator/destroy` (§8): the instance left the tree. */
  destroy(params) {
    const c = this.instances.get(params.instance);
    this.instances.delete(params.instance);
    return c ? then(c.didDestroy(), () => ({})) : {};
  }

  /** `coordinator/deepLink` (§8): a customDeepLinks type resolves the rest of a link. */
  deepLink(params) {
    const cls = this.types.get(params.type);
    if (!cls || !cls.customDeepLinks) {
      throw new RPCError(codes.deepLinkInvalid, `${params.type} does not handle deep links itself`);
    }
    return then(cls.handleDeepLink(params.segments || [], params.query || {}), ({ route, params: routeParams, consumed }) =>
      Object.assign({ route, consumed }, routeParams !== undefined ? { params: routeParams } : {}));
  }

  /** The result of a host request: `initialize` here, the rest in Connection. */
  handle(method, params) {
    return method === 'initialize' ? this.initialize(params) : super.handle(method, params);
  }

  /** `initialize` (§3): the version chosen, the plugin's info and its route table; refuses when declarations are broken. */
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

  /** Writes the declaration problems to stderr at start, for whoever runs the plugin by hand. */
  started() {
    // At once, for whoever runs the plugin by hand.
    for (const problem of this.problems) process.stderr.write(`switchyard: error: ${problem}\n`);
  }
}

/** `result` with the instance's state, when it has one (the host keeps it, §8). */
function withState(c, result) {
  if (c.state !== undefined) result.state = c.state;
  return result;
}

module.exports = { Plugin, PROTOCOL_VERSIONS };
