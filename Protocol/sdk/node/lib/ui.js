'use strict';
// Screens as data (Protocol/README.md §21): plain functions that build a screen's title and content, which a generic
// shell (the Switchyard Studio) renders as an app. Every interactive element names an action its route declares
// (`actions:` on the route); a tap sends it as `user/action`, and the coordinator's `action()` decides what follows.
//
//   const { ui } = require('switchyard-sdk');
//   list() {
//     return ui.screen('ProjectList', {
//       title: 'Projects',
//       content: [ui.list(...projects.map((p) => ui.row(p.name, { action: ui.action('open', { params: { id: p.id } }) })))],
//     });
//   }
//
// The host checks the content against the route's declared actions and the vocabulary before the screen is shown,
// and refuses it with an error naming the element (`content[0].sections[0].rows[2].action.name`).

/** `base` with the members of `optional` that are not undefined. */
const withOptional = (base, optional) => {
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) base[key] = value;
  return base;
};

/** A screen drawn from data: `name` (what a shell maps to a view), the navigation bar's `title`, `content`, `props`. */
function screen(name, { title, content = [], props } = {}) {
  const shown = { name };
  if (props !== undefined && Object.keys(props).length > 0) shown.props = props;
  if (title !== undefined) shown.title = title;
  shown.content = [...content];
  return { screen: shown };
}

/** What a tap sends: the declared action `name`, its fixed `params`, and the values of the screen's `inputs` (ids). */
function action(name, { params, inputs } = {}) {
  const sent = { name };
  if (params !== undefined && Object.keys(params).length > 0) sent.params = params;
  if (inputs !== undefined && inputs.length > 0) sent.inputs = [...inputs];
  return sent;
}

/** Text; `style` is `title`, `headline`, `body` (the default) or `caption`. */
const text = (value, { style } = {}) => withOptional({ type: 'text', text: value }, { style });

/** A grouped list of `section()`s; rows given outside a section make a section of their own. */
function list(...items) {
  const sections = [];
  let loose = [];
  for (const item of items) {
    if (Array.isArray(item.rows)) {
      if (loose.length) sections.push({ rows: loose });
      loose = [];
      sections.push(item);
    } else {
      loose.push(item);
    }
  }
  if (loose.length) sections.push({ rows: loose });
  return { type: 'list', sections };
}

/** A section of a list: `rows` under an optional `header`, with an optional `footer`. */
const section = (rows, { header, footer } = {}) => withOptional({ rows: [...rows] }, { header, footer });

/**
 * A row: `title`, with `subtitle`, `detail` (trailing), `badge`, a leading `symbol`, and the `action` a tap sends
 * (a row with an action shows a chevron unless `disclosure: false`).
 */
const row = (title, { subtitle, detail, badge, symbol, disclosure, action: sent } = {}) =>
  withOptional({ title }, { subtitle, detail, badge, symbol, disclosure, action: sent });

/** A button sending `action`; `style` is `primary`, `destructive` or `plain` (the default). */
const button = (title, sent, { style, symbol } = {}) =>
  withOptional({ type: 'button', title, action: sent }, { style, symbol });

/** A one-line text input; an action listing `id` in its inputs sends the text. */
const textField = (id, { label, placeholder, value } = {}) =>
  withOptional({ type: 'textField', id }, { label, placeholder, value });

/** A text input whose text is not shown (a password). */
const secureField = (id, { label, placeholder } = {}) => withOptional({ type: 'secureField', id }, { label, placeholder });

/** A switch; an action listing `id` sends `true` or `false`. */
const toggle = (id, label, { value = false } = {}) => ({ type: 'toggle', id, label, value });

/** A choice among `options` (values, `[value, title]` pairs or `{value, title}`); an action listing `id` sends it. */
function picker(id, label, options, { value } = {}) {
  const choices = options.map((option) => (typeof option === 'string' ? { value: option, title: option }
    : Array.isArray(option) ? { value: option[0], title: option[1] } : { value: option.value, title: option.title }));
  return withOptional({ type: 'picker', id, label, options: choices }, { value });
}

/** A thin line. */
const divider = () => ({ type: 'divider' });
/** Flexible space. */
const spacer = () => ({ type: 'spacer' });
/** A symbol of the documented set (`checkmark.circle`). */
const symbol = (name) => ({ type: 'symbol', name });
/** What the tab bar shows for a tab route: `routes.tab('todos', { tabItem: ui.tabItem('Todos', { symbol }) })`. */
const tabItem = (title, { symbol: shown, badge } = {}) => withOptional({ title }, { symbol: shown, badge });

module.exports = {
  ui: Object.freeze({
    screen, action, text, list, section, row, button, textField, secureField, toggle, picker, divider, spacer, symbol,
    tabItem,
  }),
};
