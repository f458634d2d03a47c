'use strict';
// Switchyard plugin SDK for Node.js (standard library only), CommonJS; `switchyard.mjs` is the same as an ES module.
//
// Speaks the Switchyard protocol v1 (JSON-RPC 2.0, one JSON object per line) on stdin/stdout; the spec is
// Protocol/README.md, the API and an example are in this folder's README.md, the types in switchyard.d.ts. The
// modules in lib/, by concern: declarations (routes, contents, params), coordinator (the base class of a type),
// plugin (a plugin process and its handshake), ui (screens as data, §21), connection (the protocol endpoint: lines,
// ids, answers now or when a promise settles), async (the helpers for that), errors (codes and RPCError).

const { codes, RPCError, reject, untilRoot, untilTab } = require('./lib/errors');
const { screen, coordinator, routes } = require('./lib/declarations');
const { Reply } = require('./lib/async');
const { ui } = require('./lib/ui');
const { Connection } = require('./lib/connection');
const { Coordinator } = require('./lib/coordinator');
const { Plugin, PROTOCOL_VERSIONS } = require('./lib/plugin');

// The package's major version is the newest protocol version this SDK speaks (Protocol/CHANGES.md).
const { version } = require('./package.json');

module.exports = {
  Plugin, Coordinator, Connection, Reply, RPCError, reject, untilRoot, untilTab, screen, coordinator, routes, ui, codes, PROTOCOL_VERSIONS, version,
};
