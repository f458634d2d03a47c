'use strict';
// Plugin code may answer now or later: helpers that chain a value that may be a promise, the scope of the request
// being answered, and the promise a request the plugin sends resolves to.
//
// A handler that returns a plain value is answered at once, in the same turn; only a promise (an async function)
// makes the answer wait for it, while the plugin goes on reading and answering other requests.

const { AsyncLocalStorage } = require('node:async_hooks');
const { RPCError } = require('./errors');

/** Whether `value` is a promise or another thenable, which must be awaited. */
const isThenable = (value) => value !== null && (typeof value === 'object' || typeof value === 'function')
  && typeof value.then === 'function';

/** `next(value)` at once when `value` is ready, else a promise of it once `value` settles. */
const then = (value, next) => (isThenable(value) ? Promise.resolve(value).then(next) : next(value));

/**
 * `items.map(each)`, one after the other: each call starts once the previous one has settled, so side effects keep
 * their order whether the calls answer at once or later. An array, or a promise of one.
 */
function sequence(items, each) {
  const results = [];
  for (let index = 0; index < items.length; index += 1) {
    const value = each(items[index]);
    if (isThenable(value)) {
      return (async () => {
        results.push(await value);
        for (const item of items.slice(index + 1)) results.push(await each(item));
        return results;
      })();
    }
    results.push(value);
  }
  return results;
}

/**
 * The request of the host being answered in this asynchronous context, if any: `{id, method, answered, waiting}`.
 * The requests the plugin makes meanwhile wait in `waiting` and are written right after the answer, so the host sees
 * the answer first (§8, `navigate`: a chain waits for the answers it asked for).
 */
const scopes = new AsyncLocalStorage();

/**
 * What a request the plugin sent will answer: a Promise of the result, rejected with an RPCError when the host
 * refuses it. A refusal that nothing awaits (no `then`, no `await`) and no `done` callback receives is written to
 * stderr, the host log, instead of crashing the process as an unhandled rejection would.
 */
class Reply extends Promise {
  static get [Symbol.species]() { return Promise; }

  /** Marks the reply as observed: its refusal is the caller's to handle. */
  then(onFulfilled, onRejected) {
    this.observed = true;
    return super.then(onFulfilled, onRejected);
  }

  /** A pending reply for request `id` of `method`, and the function that settles it with the host's answer. */
  static pending(method, id, done, transform, report) {
    let settle;
    const reply = new Reply((resolve, reject) => { settle = { resolve, reject }; });
    reply.method = method;
    reply.id = id;
    // Handled from the start, without marking it observed: an unhandled rejection would end the process.
    Promise.prototype.then.call(reply, undefined, () => {});
    const answer = (result, error) => {
      if (done) done(result, error);
      if (error) {
        const failure = new RPCError(error.code, error.message, error.data);
        if (!done && !reply.observed) report(`${method} (request ${id}) failed and nothing awaited it: ${error.message}`);
        settle.reject(failure);
      } else {
        settle.resolve(transform(result));
      }
    };
    return { reply, answer };
  }
}

module.exports = { isThenable, then, sequence, scopes, Reply };
