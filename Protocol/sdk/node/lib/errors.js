'use strict';
// Error codes (Protocol/README.md §7) and the error a handler throws to answer with one.

/** Every JSON-RPC and Switchyard error code of the spec's table (§7), by the spec's name. */
const codes = Object.freeze({
  parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internalError: -32603,
  timeout: -32000, notInitialized: -32001, unsupportedProtocolVersion: -32002, pluginUnavailable: -32003,
  limitExceeded: -32004, shuttingDown: -32005, invalidAnswer: -32006, unauthorized: -32007, routeNotFound: -32010,
  notAllowed: -32011, notOwner: -32012, rejectedByGuard: -32013, deepLinkInvalid: -32014, instanceNotFound: -32015,
  conflict: -32016, compositionError: -32017,
});

/**
 * A typed error: throw it from a handler (or reject with it) to answer with `code`, `message` and `data` (§7); what
 * a request the plugin sent rejects with when the host refuses it.
 */
class RPCError extends Error {
  /**
   * @param {number} code one of `codes`, or a code of the plugin's own
   * @param {string} message a sentence naming what failed
   * @param {unknown} [data] context, usually an object
   */
  constructor(code, message, data) {
    super(message);
    this.name = 'RPCError';
    this.code = code;
    this.data = data;
  }

  /** The `error` member of an answer: `{code, message, data?}`. */
  toJSON() {
    return Object.assign({ code: this.code, message: this.message }, this.data !== undefined ? { data: this.data } : {});
  }
}

/**
 * A guard's refusal, to throw from a route method (or reject with): the route is not taken, the whole request fails
 * with -32013 rejectedByGuard and the tree stays as it was (§8, `coordinator/route`).
 *
 * With `options.deferUntil` it is a "not yet" (§13.5): a deep link opened with `defer` waits until the condition holds
 * (`untilRoot(...)`, `untilTab(...)`), then is applied; `options.redirect` is what to show meanwhile (a sign-in), steps
 * the host applies once from this coordinator, as `navigate` would (`[{ op: 'popToRoot' }]`). A deep link that may not
 * wait, and any other request, fails as with a plain refusal.
 * @param {string} reason
 * @param {unknown} [data]
 * @param {{ deferUntil?: object, redirect?: object[] }} [options]
 */
const reject = (reason, data, options) => {
  const { deferUntil, redirect } = options || {};
  if (deferUntil === undefined) {
    if (redirect !== undefined) throw new TypeError('reject(..., { redirect }) needs deferUntil: a redirect is what to show while a link waits');
    return new RPCError(codes.rejectedByGuard, reason, data);
  }
  if (data !== undefined && (data === null || typeof data !== 'object' || Array.isArray(data))) {
    throw new TypeError('reject(..., { deferUntil }) sends its deferral in data.defer, so data must be an object');
  }
  const deferral = Object.assign({ until: Object.assign({}, deferUntil) }, redirect !== undefined ? { redirect: redirect.map((step) => Object.assign({}, step)) } : {});
  return new RPCError(codes.rejectedByGuard, reason, Object.assign({}, data || {}, { defer: deferral }));
};

/** A condition of a deferral: `{[kind]: route}` and the coordinator it is about, when given. */
const condition = (kind, route, where) => {
  const { instance, plugin, type } = where || {};
  return Object.assign(
    { [kind]: route },
    instance !== undefined ? { instance } : {}, plugin !== undefined ? { plugin } : {}, type !== undefined ? { type } : {});
};

/**
 * A deferral's condition (§13.5): `route` is the active root of a stack coordinator: `where.instance`, else any instance
 * of `where.plugin`.`where.type` (the plugin defaults to this one), else the coordinator whose route was refused.
 * @param {string} route
 * @param {{ instance?: number, plugin?: string, type?: string }} [where]
 */
const untilRoot = (route, where) => condition('root', route, where);

/**
 * A deferral's condition (§13.5): a tabs coordinator shows the tab `route` (chosen as for `untilRoot`).
 * @param {string} route
 * @param {{ instance?: number, plugin?: string, type?: string }} [where]
 */
const untilTab = (route, where) => condition('tab', route, where);

module.exports = { codes, RPCError, reject, untilRoot, untilTab };
