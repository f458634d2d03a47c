'use strict';
// The plugin's end of the protocol (§1–§3): lines in and out, ids, answers, and plugin code that answers later.
//
// stdout belongs to the protocol: run() points console.log and process.stdout.write at stderr, so stray output
// from plugin code lands in the host log instead of corrupting the stream.

const path = require('node:path');
const readline = require('node:readline');
const { codes, RPCError } = require('./errors');
const { isThenable, scopes, Reply } = require('./async');

// How much of a handler's stack goes into the error's data: the answer must stay one protocol line (§6's
// maxLineBytes). The start is kept, where the error and its innermost frames are; stderr gets all of it.
const maxStackLength = 16384;

/** The SDK's code (lib/): its frames at the end of a stack are the SDK calling the plugin's code. */
const sdkFolder = __dirname;

/**
 * `stack` without the frames at its end that are the SDK's own dispatch or Node's internals (they say nothing to the
 * plugin's author, and would push the plugin's own stderr lines out of the tail the host keeps, §7); frames of the SDK
 * called from the plugin's code stay, and so does a stack that is all SDK.
 */
function trimmed(stack) {
  const lines = stack.split('\n');
  let end = lines.length;
  const outside = (line) => !line.includes(sdkFolder + path.sep) && !line.includes('(node:') && !/^\s+at (async )?node:/.test(line);
  while (end > 0 && /^\s+at /.test(lines[end - 1]) && !outside(lines[end - 1])) end -= 1;
  return end > 0 && /^\s+at /.test(lines[end - 1]) ? lines.slice(0, end).join('\n') : stack;
}

/** What was thrown, which need not be an Error: its type's name, a one-line text and the stack (or the value). */
function describe(error) {
  if (error instanceof Error) {
    return { name: error.name, text: `${error.name}: ${error.message}`, stack: error.stack ? trimmed(error.stack) : `${error.name}: ${error.message}` };
  }
  const text = `${typeof error}: ${String(error)}`;
  return { name: typeof error, text, stack: text };
}

/** Writes what failed and the thrown value's stack to stderr (the host log). */
function report(what, error) {
  process.stderr.write(`switchyard: ${what} failed:\n${describe(error).stack}\n`);
}

/**
 * The `error` member answering a handler's failure: a typed error as it is; anything else internalError naming the
 * error, with its stack (§7: the stack is what makes the bug fixable; stderr gets it too, for the case where nobody
 * sees the answer) and, when the author's method threw it (`scope.site`), the route, the type, the method and its
 * file and line. `unwritable`: the error is the answer's, which JSON cannot carry.
 */
function errorBody(error, scope, unwritable = false) {
  if (error instanceof RPCError) return error.toJSON();
  const { name, text, stack } = describe(error);
  report(scope.method, error);
  const data = { type: name, stack: stack.slice(0, maxStackLength) };
  if (!scope.site) return { code: codes.internalError, message: text, data };
  // The author's method threw (or produced what JSON cannot carry): name it, and where it is.
  const { location, message } = unwritable ? scope.site.unsendable(text) : scope.site.threw(text, error && error.stack);
  return { code: codes.internalError, message, data: { ...data, ...scope.site.data(location) } };
}

/**
 * The protocol endpoint of a plugin process: dispatches the host's requests and notifications to handlers, answers
 * each request exactly once, and sends the plugin's own requests. A handler may return a value (answered at once) or
 * a promise (answered when it settles; a rejection answers like a throw).
 */
class Connection {
  /** No handlers and no output yet: a subclass (Plugin) registers its handlers, run() connects stdin and stdout. */
  constructor() {
    /** Request handlers by method. */
    this.handlers = new Map();
    /** Notification handlers by method. */
    this.notificationHandlers = new Map();
    this.pending = new Map();
    this.nextId = 1;
    this.shutdownRequested = false;
    this.write = null;
  }

  /** Handles the host request `method`: `handler(params)` returns the result, or a promise of it. */
  request(method, handler) { this.handlers.set(method, handler); }

  /** Handles the host notification `method`: `handler(params)`; a rejected promise is logged. */
  notification(method, handler) { this.notificationHandlers.set(method, handler); }

  /** Writes one message now (`jsonrpc` is added). */
  send(message) {
    this.writeLine(JSON.stringify(Object.assign({ jsonrpc: '2.0' }, message)) + '\n');
  }

  /** Sends a request to the host now. Resolves to the result (a Reply); `done(result, error)` is the callback form. */
  call(method, params, done) {
    const { reply, line } = this.outgoing(method, params, done, (result) => result);
    this.writeLine(line);
    return reply;
  }

  /**
   * Like call(), but while a handler of a host request runs (in its async context), sent right after that handler's
   * answer, so the host sees the answer first (§8, `navigate`); elsewhere sent now. Do not await it in the handler
   * that made it: it is sent only once that handler has answered.
   */
  deferCall(method, params, done, transform = (result) => result) {
    const { reply, line } = this.outgoing(method, params, done, transform);
    const scope = scopes.getStore();
    if (scope && !scope.answered) scope.waiting.push(line); else this.writeLine(line);
    return reply;
  }

  /** A `log` notification (§8): `level` is trace, debug, info, notice, warning, error or critical. */
  log(level, message) { this.send({ method: 'log', params: { level, message } }); }

  /** A request of the plugin's: its id, its encoded line and the Reply its answer settles. */
  outgoing(method, params, done, transform) {
    const id = `js-${this.nextId++}`;
    const { reply, answer } = Reply.pending(method, id, done, transform, (text) => process.stderr.write(`switchyard: ${text}\n`));
    this.pending.set(id, answer);
    return { reply, line: JSON.stringify({ jsonrpc: '2.0', id, method, params: params || {} }) + '\n' };
  }

  /** Writes protocol text to stdout (the real one, kept by run()). */
  writeLine(text) {
    if (!this.write) throw new Error('the plugin is not running: call run() first');
    this.write(text);
  }

  /** The result of a host request, or a promise of it (the plugin adds `initialize`). */
  handle(method, params) {
    if (method === '$/ping') return {};
    if (method === 'shutdown') { this.shutdownRequested = true; return {}; }
    const handler = this.handlers.get(method);
    if (!handler) throw new RPCError(codes.methodNotFound, `unknown method '${method}'`, { method });
    return handler(params);
  }

  /** Dispatches one message from the host: an answer to the plugin's request, a notification, or a request. */
  receive(message) {
    const { method } = message;
    const params = message.params || {};
    if (method === undefined) {
      const answer = this.pending.get(message.id);
      this.pending.delete(message.id);
      // Nobody to answer when a callback throws: the stack goes to the host log.
      if (answer) {
        try { answer(message.result, message.error); } catch (error) { report(`the callback of request ${message.id}`, error); }
      }
    } else if (!('id' in message)) {
      if (method === 'exit') process.exit(this.shutdownRequested ? 0 : 1);
      const handler = this.notificationHandlers.get(method);
      if (!handler) return;
      try {
        const outcome = handler(params);
        if (isThenable(outcome)) Promise.resolve(outcome).catch((error) => report(method, error));
      } catch (error) { report(method, error); }
    } else {
      this.answer(message.id, method, params);
    }
  }

  /**
   * Answers the host's request `id`: at once when its handler returns a value or throws, when its promise settles
   * otherwise. The handler runs in the request's async context (`scopes`), so the requests it makes wait for the answer.
   */
  answer(id, method, params) {
    const scope = { id, method, answered: false, waiting: [] };
    let outcome;
    try {
      outcome = scopes.run(scope, () => this.handle(method, params));
    } catch (error) {
      this.finish(scope, error, true);
      return;
    }
    if (isThenable(outcome)) {
      Promise.resolve(outcome).then((result) => this.finish(scope, result, false), (error) => this.finish(scope, error, true));
    } else {
      this.finish(scope, outcome, false);
    }
  }

  /** Writes the answer of `scope`'s request (its result, or the error it `failed` with), then the requests its
   * handler made, in one write. */
  finish(scope, outcome, failed) {
    let line;
    try {
      line = JSON.stringify(failed
        ? { jsonrpc: '2.0', id: scope.id, error: errorBody(outcome, scope) }
        : { jsonrpc: '2.0', id: scope.id, result: outcome === undefined ? {} : outcome });
    } catch (unwritable) {
      // A BigInt or a cycle in the answer: answer that instead of nothing.
      line = JSON.stringify({ jsonrpc: '2.0', id: scope.id, error: errorBody(unwritable, scope, true) });
    }
    scope.answered = true;
    this.writeLine(line + '\n' + scope.waiting.join(''));
    scope.waiting = [];
  }

  /** Serves the host on stdin and stdout until stdin ends or the host says `exit`, then exits the process. */
  run() {
    // Keep the real stdout for the protocol; console.log and direct writes go to stderr.
    const protocolWrite = process.stdout.write.bind(process.stdout);
    this.write = (text) => protocolWrite(text);
    process.stdout.write = process.stderr.write.bind(process.stderr);
    console.log = console.error;
    this.started();
    const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (!line.trim()) return;
      let message;
      try { message = JSON.parse(line); } catch (error) {
        process.stderr.write(`switchyard: ignoring a line that is not JSON: ${error.message}\n`);
        return;
      }
      if (message && typeof message === 'object' && !Array.isArray(message)) this.receive(message);
    });
    // stdin reached EOF: the host closed it or died. The contract is to exit.
    lines.on('close', () => process.exit(0));
  }

  /** Called by run() once stdout is the protocol's, before the first line is read. */
  started() {}
}

module.exports = { Connection, describe, report };
