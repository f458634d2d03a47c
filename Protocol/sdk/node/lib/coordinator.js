'use strict';
// The base class of a coordinator type, and the check of its declaration at start-up.

const { codes, RPCError } = require('./errors');
const { captures, declareParams } = require('./declarations');

/** Whether a function's parameter list is empty and its body does not read `arguments`: it cannot see params. */
function takesNothing(fn) {
  const text = Function.prototype.toString.call(fn);
  return /^[^(]*\(\s*\)/.test(text) && !/\barguments\b/.test(text);
}

/**
 * Base class of a coordinator type. Set static `typeName`, `kind` ('stack', 'tabs', 'wrapper'), `routes` and, for a
 * stack, `initial`. For each route define a method named like the route, taking (params, link) and returning
 * screen(...) or coordinator(...), or throwing reject(...) (a guard). It may be `async`: the host's request is
 * answered when its promise settles (a rejection answers like a throw), and the plugin answers other requests
 * meanwhile. A route without its method is refused at start-up (declarationProblems()), not when it is first taken.
 * The hooks below may be async as well.
 */
class Coordinator {
  /** An instance the host created: `instance` is its id, `params` what the route that opened it gave. */
  constructor(plugin, instance, params) {
    this.plugin = plugin;
    this.instance = instance;
    this.params = params;
    /** Any JSON the host keeps for the instance and hands back after a restart (§16). */
    this.state = undefined;
  }

  /** [route, params] of the root to show at creation; default: [static `initial`, undefined]. */
  initialRoot() { return [this.constructor.initial, undefined]; }
  /** For a tabs coordinator: the tab names shown at creation, in order (undefined: every declared tab), spec §12.7. */
  initialTabs() { return undefined; }
  /**
   * A new version of the plugin takes this instance over from `fromVersion` (`coordinator/create`, reason `upgrade`,
   * spec §20.1): return `state`, as that version wrote it, in this version's shape (Erlang's `code_change`); may be
   * async. Default: the state as it is. Throwing refuses the upgrade, which rolls back.
   */
  migrate(_fromVersion, state) { return state; }
  /** The instance left the tree (`coordinator/destroy`): release what it holds. */
  didDestroy() {}
  /** An entry of this instance left the tree; `reason` is 'user' or 'navigation' (Stinsen's onDismiss). */
  dismissed(_route, _entry, _reason) {}
  /** A tab of this tabs instance was selected (`isRepeat`: it already was). */
  tabSelected(_tab, _isRepeat) {}
  /** An entry became visible again (spec §12.9); overriding it declares the type's `appearance`. */
  appeared(_entry) {}
  /**
   * A screen of this instance emitted a declared action (spec §12.6): return the steps to take from this instance
   * (one chain, one revision), or nothing to change nothing. Throw an RPCError to refuse it.
   */
  action(_name, _params, _context) { return undefined; }

  /**
   * For types with static `customDeepLinks = true`: resolve the remaining `segments` of a link into
   * `{route, params?, consumed}` (§8, `coordinator/deepLink`), or throw an RPCError (codes.deepLinkInvalid).
   */
  static handleDeepLink(_segments, _query) { throw new RPCError(codes.deepLinkInvalid, 'not handled'); }

  /**
   * Applies `steps` from this instance as one chain (§12). Sent after the answer being written, if any; resolves to
   * {revision, instance} (do not await it in the handler that called it, which must answer first). `done(result,
   * error)` is the callback form.
   */
  navigate(steps, done) { return this.plugin.deferCall('navigate', { instance: this.instance, steps }, done); }

  /**
   * A read-only question about this instance (spec §12.4: canDismiss, hasParent, presentedCount...), sent like
   * navigate(); resolves to the answer (its `result` member), and `done` gets (answer, error).
   */
  query(query, route, done, extra = {}) {
    const answer = done && ((result, error) => done(result ? result.result : undefined, error));
    const request = Object.assign({}, extra, { query, instance: this.instance }, route ? { route } : {});
    return this.plugin.deferCall('tree/query', request, answer, (result) => (result ? result.result : undefined));
  }

  /** The type's entry in the `initialize` result's `coordinators` (§5). */
  static declaration() {
    const declaration = { type: this.typeName, kind: this.kind || 'stack', routes: this.routes };
    if (this.initial !== undefined) declaration.initialRoute = this.initial;
    // The params an instance is created with (`this.params`), declared: the contract with whoever opens the type.
    if (this.creationParams !== undefined) declaration.params = declareParams(this.creationParams);
    if (this.customDeepLinks) declaration.customDeepLinks = true;
    if (this.prototype.appeared !== Coordinator.prototype.appeared) declaration.appearance = true;
    return declaration;
  }

  /**
   * What in the declaration would fail only when the route is taken: a route without its method, a deep-link capture
   * the method cannot receive or the route's params do not declare, custom deep links without handleDeepLink. One
   * line each, naming the type and the route; Plugin.run() refuses to start with any.
   */
  static declarationProblems() {
    const problems = [];
    const ownDispatch = this.prototype.contentFor !== Coordinator.prototype.contentFor;
    for (const { name, deepLink, params } of this.routes || []) {
      const handler = this.prototype[name];
      const captured = captures(deepLink || '');
      // A name that is not an identifier (`sign-out`) is written quoted, as a class method may be: 'sign-out'(…) { … }.
      const method = /^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`;
      const signature = `${method}(params, link) { ... }`;
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
    if (this.customDeepLinks && this.handleDeepLink === Coordinator.handleDeepLink) {
      problems.push(`customDeepLinks is true but the class ${this.name} has no static handleDeepLink(segments, query)`);
    }
    return problems.map((problem) => `${this.typeName}: ${problem}`);
  }

  /**
   * What `name` shows: calls the method named like the route with (params, link). Override it to dispatch routes
   * yourself (then no method per route is required).
   */
  contentFor(name, params, link) {
    const factory = this[name];
    if (typeof factory !== 'function') {
      throw new RPCError(codes.routeNotFound, `${this.constructor.typeName} has no route '${name}'`, { route: name });
    }
    return factory.call(this, params || {}, link);
  }
}

module.exports = { Coordinator };
