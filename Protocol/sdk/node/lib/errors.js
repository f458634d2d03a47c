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
 * @param {string} reason
 * @param {unknown} [data]
 */
const reject = (reason, data) => new RPCError(codes.rejectedByGuard, reason, data);

module.exports = { codes, RPCError, reject };
