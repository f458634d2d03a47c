// Screens as data (Protocol/README.md §21), drawn as an iOS app draws them: text in SwiftUI's styles, inset grouped
// lists with chevrons, buttons, form fields grouped as a Form groups them, switches and pickers. A tap sends the
// element's action (`user/action`) with its fixed params and the values of the inputs it names; the element is
// disabled while the action is in flight, and its typed error is shown at the element.
import { h } from './dom.js';
import { symbol } from './symbols.js';

/** The names of §7's codes, for an error shown at an element. */
const CODE_NAMES = {
  '-32602': 'invalidParams', '-32603': 'internalError', '-32000': 'timeout', '-32003': 'pluginUnavailable',
  '-32004': 'limitExceeded', '-32005': 'shuttingDown', '-32006': 'invalidAnswer', '-32010': 'routeNotFound',
  '-32011': 'notAllowed', '-32012': 'notOwner', '-32013': 'rejectedByGuard', '-32015': 'instanceNotFound',
  '-32016': 'conflict',
};

const INPUTS = new Set(['textField', 'secureField', 'toggle', 'picker']);

export class ContentRenderer {
  /** @param ui {action(instance, entry, name, params) → Promise, changed()} */
  constructor(ui) {
    this.ui = ui;
    /** What the user typed or chose, by `instance:entry:id`: kept across renders, dropped when the entry leaves. */
    this.values = new Map();
    /** Elements whose action is in flight, by `instance:entry:path`. */
    this.busy = new Set();
    /** The typed error of an element's last action, by the same key. */
    this.errors = new Map();
    /** The inputs each rendered screen has, by `instance:entry`: what an action's `inputs` name. */
    this.inputs = new Map();
  }

  /** Forgets what belonged to entries that left the tree (a form's text does not come back with a new screen). */
  prune(snapshot) {
    const alive = new Set();
    for (const node of snapshot.instances) {
      for (const entry of [node.root, ...(node.entries || []), ...(node.tabs || []), node.child].filter(Boolean)) {
        alive.add(`${node.id}:${entry.entry}`);
      }
    }
    const owner = (key) => key.split(':').slice(0, 2).join(':');
    for (const map of [this.values, this.errors, this.inputs]) {
      for (const key of [...map.keys()]) if (!alive.has(owner(key))) map.delete(key);
    }
  }

  /** The elements of `screen.content`, for the entry `entry` of the instance `node`. */
  render(node, entry, content) {
    const scope = `${node.id}:${entry.entry}`;
    const inputs = new Map();
    for (const element of content) if (INPUTS.has(element.type) && element.id) inputs.set(element.id, element);
    this.inputs.set(scope, inputs);
    const children = [];
    let group = null;
    content.forEach((element, index) => {
      const path = `content[${index}]`;
      const drawn = this.element(node, entry, element, path);
      // Consecutive inputs share one inset group, as in a SwiftUI Form.
      if (INPUTS.has(element.type)) {
        if (!group) { group = h('div', { class: 'ui-group' }); children.push(group); }
        group.append(drawn);
      } else {
        group = null;
        children.push(drawn);
      }
    });
    return h('div', { class: 'ui-content', dataset: { content: scope } }, children);
  }

  element(node, entry, element, path) {
    switch (element.type) {
      case 'text':
        return h('p', { class: `ui-text ${element.style || 'body'}`, dataset: { element: path }, text: element.text });
      case 'list':
        return h('div', { class: 'ui-list', dataset: { element: path } },
          (element.sections || []).map((section, index) => this.section(node, entry, section, `${path}.sections[${index}]`)));
      case 'button':
        return this.interactive(node, entry, element.action, path, (run, busy) => h('button', {
          type: 'button', class: `ui-button ${element.style || 'plain'}`, disabled: busy, 'aria-busy': busy ? 'true' : undefined,
          dataset: { element: path, actionName: element.action.name, title: element.title }, onclick: run,
        }, element.symbol ? symbol(element.symbol) : null, h('span', { text: element.title })));
      case 'textField':
      case 'secureField':
        return this.textField(node, entry, element, path);
      case 'toggle':
        return this.toggle(node, entry, element, path);
      case 'picker':
        return this.picker(node, entry, element, path);
      case 'divider':
        return h('hr', { class: 'ui-divider', dataset: { element: path } });
      case 'spacer':
        return h('div', { class: 'ui-spacer', dataset: { element: path } });
      case 'symbol':
        return h('div', { class: 'ui-symbol', dataset: { element: path } }, symbol(element.name, 'symbol large'));
      default:
        return h('div', { class: 'ui-unknown', dataset: { element: path }, text: `(${element.type})` });
    }
  }

  section(node, entry, section, path) {
    return h('section', { class: 'ui-section', dataset: { element: path } },
      section.header ? h('h3', { class: 'ui-section-header', text: section.header }) : null,
      h('div', { class: 'ui-rows' }, (section.rows || []).map((row, index) => this.row(node, entry, row, `${path}.rows[${index}]`))),
      section.footer ? h('p', { class: 'ui-section-footer', text: section.footer }) : null);
  }

  row(node, entry, row, path) {
    const disclosure = row.disclosure ?? Boolean(row.action);
    const parts = [
      row.symbol ? symbol(row.symbol, 'symbol row-symbol') : null,
      h('span', { class: 'row-text' }, h('span', { class: 'row-title', text: row.title }),
        row.subtitle ? h('span', { class: 'row-subtitle', text: row.subtitle }) : null),
      row.detail ? h('span', { class: 'row-detail', text: row.detail }) : null,
      row.badge ? h('span', { class: 'row-badge', text: row.badge }) : null,
      disclosure ? symbol('chevron', 'symbol chevron') : null,
    ];
    if (!row.action) return h('div', { class: 'ui-row', dataset: { element: path, rowTitle: row.title } }, parts);
    return this.interactive(node, entry, row.action, path, (run, busy) => h('button', {
      type: 'button', class: 'ui-row tappable', disabled: busy, 'aria-busy': busy ? 'true' : undefined,
      dataset: { element: path, rowTitle: row.title, actionName: row.action.name }, onclick: run,
    }, parts));
  }

  textField(node, entry, element, path) {
    const key = `${node.id}:${entry.entry}:${element.id}`;
    const input = h('input', {
      type: element.type === 'secureField' ? 'password' : 'text', class: 'ui-input', autocomplete: 'off', spellcheck: 'false',
      placeholder: element.placeholder || '', 'aria-label': element.label || element.id, dataset: { input: element.id, inputKey: key },
      oninput: (event) => this.values.set(key, event.target.value),
    });
    input.value = this.values.has(key) ? this.values.get(key) : (element.value || '');
    return h('label', { class: 'ui-field', dataset: { element: path } },
      element.label ? h('span', { class: 'ui-label', text: element.label }) : null, input);
  }

  toggle(node, entry, element, path) {
    const key = `${node.id}:${entry.entry}:${element.id}`;
    const input = h('input', {
      type: 'checkbox', role: 'switch', class: 'ui-switch', dataset: { input: element.id, inputKey: key },
      onchange: (event) => this.values.set(key, event.target.checked),
    });
    input.checked = this.values.has(key) ? this.values.get(key) : Boolean(element.value);
    return h('label', { class: 'ui-field inline', dataset: { element: path } }, h('span', { class: 'ui-label', text: element.label }), input);
  }

  picker(node, entry, element, path) {
    const key = `${node.id}:${entry.entry}:${element.id}`;
    const select = h('select', {
      class: 'ui-picker', 'aria-label': element.label, dataset: { input: element.id, inputKey: key },
      onchange: (event) => this.values.set(key, event.target.value),
    }, (element.options || []).map((option) => h('option', { value: option.value, text: option.title })));
    select.value = this.values.has(key) ? this.values.get(key) : (element.value ?? (element.options || [])[0]?.value);
    return h('label', { class: 'ui-field inline', dataset: { element: path } }, h('span', { class: 'ui-label', text: element.label }), select);
  }

  /** An element that sends `action` when tapped, with its error (if its last action failed) under it. */
  interactive(node, entry, action, path, draw) {
    const key = `${node.id}:${entry.entry}:${path}`;
    const run = () => this.send(node, entry, action, key);
    const error = this.errors.get(key);
    const drawn = draw(run, this.busy.has(key));
    if (!error) return drawn;
    return h('div', { class: 'ui-with-error' }, drawn,
      h('p', { class: 'ui-error', role: 'alert', dataset: { errorFor: path, errorCode: String(error.code ?? '') }, text: error.text }));
  }

  /** The values an action sends: its fixed params, then the inputs it names, each under its id. */
  params(node, entry, action) {
    const params = { ...(action.params || {}) };
    const inputs = this.inputs.get(`${node.id}:${entry.entry}`) || new Map();
    for (const id of action.inputs || []) {
      const key = `${node.id}:${entry.entry}:${id}`;
      const element = inputs.get(id);
      if (this.values.has(key)) params[id] = this.values.get(key);
      else if (element && element.type === 'toggle') params[id] = Boolean(element.value);
      else if (element && element.type === 'picker') params[id] = element.value ?? (element.options || [])[0]?.value;
      else params[id] = (element && element.value) || '';
    }
    return Object.keys(params).length ? params : undefined;
  }

  send(node, entry, action, key) {
    if (this.busy.has(key)) return;
    this.busy.add(key);
    this.errors.delete(key);
    this.ui.changed();
    this.ui.action(node.id, entry.entry, action.name, this.params(node, entry, action))
      .catch((error) => {
        const rpc = error && error.rpc;
        const name = rpc ? CODE_NAMES[String(rpc.code)] : null;
        this.errors.set(key, { code: rpc ? rpc.code : null, text: rpc ? `${rpc.message}${name ? ` (${name})` : ''}` : String(error.message || error) });
      })
      .finally(() => {
        this.busy.delete(key);
        this.ui.changed();
      });
  }
}
