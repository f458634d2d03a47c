'use strict';
// What a plugin declares and answers: route declarations (§5), screen and coordinator contents (§8), and the check
// of a route's params against its declaration.

const { codes, RPCError } = require('./errors');

/** Content showing the screen `name` with `props` (what the UI shell maps to a view). */
const screen = (name, props) => ({ screen: props ? { name, props } : { name } });

/** Content opening a coordinator of `type` (of `plugin` when it is another plugin's), created with `params`. */
const coordinator = (type, { plugin, params } = {}) => ({
  coordinator: Object.assign({ type }, plugin ? { plugin } : {}, params !== undefined ? { params } : {}),
});

const declareParams = (params) => params.map((p) => (typeof p === 'string' ? { name: p, type: 'string' } : p));

function route(name, transition, { deepLink, target, plugin, params, targetParams, actions, transitions, presentation, tabItem } = {}) {
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
  // On a tab: what the tab bar shows, {title, symbol?, badge?} (spec §21; ui.tabItem makes it).
  if (tabItem !== undefined) result.tabItem = { ...tabItem };
  return result;
}

/**
 * Route declarations, one maker per transition: `routes.push('todo', { deepLink: 'todo/:id', params: ['id'] })`.
 * Options: `deepLink` (a pattern relative to the coordinator, §13), `params` (names of required strings or
 * `{name, type, required}`), `target` and `plugin` (the coordinator type the route opens), `actions` (what the
 * screen emits, §12.6), `transitions` and `presentation` (§12.8), `tabItem` (a tab's title and symbol, §21).
 */
const routes = Object.freeze({
  /** A root route of a stack coordinator: what `initial` names, or what a `setRoot` step picks. */
  root: (name, options) => route(name, 'root', options),
  /** A route pushed onto a stack coordinator's stack. */
  push: (name, options) => route(name, 'push', options),
  /** A route presented as a sheet over a stack. */
  modal: (name, options) => route(name, 'modal', options),
  /** A route presented full screen over a stack. */
  fullScreen: (name, options) => route(name, 'fullScreen', options),
  /** A tab of a tabs coordinator, in display order. */
  tab: (name, options) => route(name, 'tab', options),
  /** The one child of a wrapper coordinator. */
  child: (name, options) => route(name, 'child', options),
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

module.exports = { screen, coordinator, routes, checkParams, captures, declareParams };
