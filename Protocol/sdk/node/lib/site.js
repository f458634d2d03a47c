'use strict';
// Where in the plugin author's code a request went wrong: the route, the coordinator type, the method the author
// wrote (with its file and line) and the host's method, so the error the host and the user see points at the code to
// fix instead of at the SDK or at the host's check of the answer (issue 30).

const { fileURLToPath } = require('node:url');

/**
 * Where `fn` is defined, `{ file, line }`, or null: V8 keeps it as the function's [[FunctionLocation]], which only the
 * inspector protocol reads. Its session answers synchronously on the main thread; this runs only when a request has
 * already failed, so enabling the debugger for a moment costs the plugin nothing otherwise.
 */
function functionLocation(fn) {
  if (typeof fn !== 'function') return null;
  let inspector;
  try { inspector = require('node:inspector'); } catch { return null; }
  const session = new inspector.Session();
  const scripts = new Map();
  let found = null;
  const key = `__switchyardLocate${process.pid}`;
  try {
    session.connect();
    session.on('Debugger.scriptParsed', ({ params }) => scripts.set(params.scriptId, params.url));
    session.post('Debugger.enable');
    globalThis[key] = fn;
    session.post('Runtime.evaluate', { expression: `globalThis.${key}` }, (error, evaluated) => {
      if (error || !evaluated.result.objectId) return;
      session.post('Runtime.getProperties', { objectId: evaluated.result.objectId }, (failure, properties) => {
        if (failure) return;
        const location = (properties.internalProperties || []).find((p) => p.name === '[[FunctionLocation]]');
        const url = location && scripts.get(location.value.value.scriptId);
        if (url) {
          found = { file: url.startsWith('file:') ? fileURLToPath(url) : url, line: location.value.value.lineNumber + 1 };
        }
      });
    });
  } catch {
    found = null;
  } finally {
    delete globalThis[key];
    try { session.post('Debugger.disable'); session.disconnect(); } catch { /* already gone */ }
  }
  return found;
}

/** The line of the innermost frame of `stack` in `file` (where the method threw), or null. */
function lineIn(stack, file) {
  for (const frame of String(stack || '').split('\n')) {
    const match = /\(?((?:file:\/\/)?[^()\s]+):(\d+):\d+\)?$/.exec(frame.trim());
    if (match && (match[1] === file || match[1] === `file://${file}`)) return Number(match[2]);
  }
  return null;
}

/**
 * The author's method answering one request: `what` names the route and the type ("route 'todo' of todos"), `name`
 * the method ("TodoList.todo"), `fn` is the method itself (for its file and line), `method` the host's request,
 * `expected` what it must return, `returns` how to write that, `refuse` how to refuse on purpose (valid JavaScript).
 */
class HandlerSite {
  constructor({ what, name, fn, method, expected, returns, refuse }) {
    Object.assign(this, { what, name, fn, method, expected, returns, refuse });
  }

  /** The method's file and line: where it threw when `stack` passes through its file, else its definition. */
  location(stack) {
    const defined = functionLocation(this.fn);
    if (!defined) return null;
    return { file: defined.file, line: (stack && lineIn(stack, defined.file)) || defined.line };
  }

  where(location) {
    return `(${location ? `${location.file}:${location.line}, ` : ''}answering ${this.method})`;
  }

  /** The message of a value the method threw: what, where, and the way to refuse on purpose. */
  threw(text, stack) {
    const location = this.location(stack);
    return { location, message: `${this.what}: ${this.name} threw ${text} ${this.where(location)}; fix it there (the stack below), or ${this.refuse}` };
  }

  /** The message of a value the method returned that is not content. */
  returned(value) {
    const location = this.location(null);
    const forgot = value === undefined ? ' (is `return` missing?)' : '';
    let shown;
    try { shown = value === undefined ? 'undefined' : JSON.stringify(value); } catch { shown = String(value); }
    if (shown === undefined) shown = String(value);
    if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
    return { location, message: `${this.what}: ${this.name} returned ${shown}${forgot} instead of ${this.expected} ${this.where(location)}; end it with ${this.returns}` };
  }

  /** The message of an answer JSON cannot carry (a BigInt or a cycle in a screen's props). */
  unsendable(text) {
    const location = this.location(null);
    return { location, message: `${this.what}: ${this.name} returned an answer that cannot be sent: ${text} ${this.where(location)}` };
  }

  /** The same, as fields of the error's `data`. */
  data(location) {
    return location ? { handler: this.name, file: location.file, line: location.line } : { handler: this.name };
  }
}

module.exports = { HandlerSite, functionLocation };
