// The inspector: the tree (collapsible), the plugins (with fault buttons when allowed), the protocol traffic (from
// the host's trace stream) and the revision timeline.
import { h, compact, pretty } from './dom.js';
import { rawTraceMessage } from './rpc.js';

const MAX_TRAFFIC = 2000;
const MAX_TIMELINE = 500;

// MARK: - Tree

export function renderTree(container, snapshot) {
  const byId = new Map(snapshot.instances.map((node) => [node.id, node]));
  const collapsed = new Set([...container.querySelectorAll('details[data-tree-instance]:not([open])')].map((d) => d.dataset.treeInstance));
  const instance = (id) => {
    const node = byId.get(id);
    if (!node) return h('div', { class: 'muted', text: `#${id} missing` });
    const status = node.status === 'unavailable'
      ? h('span', { class: 'pill bad', dataset: { treeUnavailable: String(node.id) }, title: node.unavailableReason || '', text: node.pending ? 'placeholder' : 'unavailable' })
      : null;
    const details = h('details', { class: 'tree-node', dataset: { treeInstance: String(node.id) } },
      h('summary', {},
        h('span', { class: 'node-id', text: `#${node.id}` }), ' ',
        h('span', { class: 'node-name', text: `${node.plugin}.${node.type}` }), ' ',
        h('span', { class: 'kind', text: node.kind || '?' }), ' ',
        node.params && compact(node.params) ? h('span', { class: 'params', text: compact(node.params) }) : null, ' ', status),
      node.status === 'unavailable' && node.unavailableReason ? h('div', { class: 'reason', text: node.unavailableReason }) : null,
      entries(node).map(([label, entry]) => h('div', { class: 'tree-entry', dataset: { treeEntry: String(entry.entry) } },
        h('span', { class: `slot ${label}`, text: label }), ' ',
        h('span', { class: 'route-name', text: entry.route }),
        entry.params && compact(entry.params) ? h('span', { class: 'params', text: ' ' + compact(entry.params) }) : null,
        h('span', { class: 'entry-id', text: ` e${entry.entry}` }),
        entry.content && entry.content.screen
          ? h('span', { class: 'screen-ref', text: ` → ${entry.content.screen.name} ${compact(entry.content.screen.props)}` })
          : null,
        entry.content && entry.content.coordinator !== undefined ? instance(entry.content.coordinator) : null)));
    details.open = !collapsed.has(String(node.id));
    return details;
  };
  container.replaceChildren(h('div', { class: 'tree-revision', dataset: { treeRevision: String(snapshot.revision) }, text: `revision ${snapshot.revision}` }), instance(snapshot.root));
}

function entries(node) {
  switch (node.kind) {
    case 'stack': return [['root', node.root], ...(node.entries || []).map((entry) => [entry.transition, entry])].filter(([, entry]) => entry);
    case 'tabs': return (node.tabs || []).map((entry) => [entry.route === node.selectedTab ? 'tab ●' : 'tab', entry]);
    case 'wrapper': return node.child ? [['child', node.child]] : [];
    default: return [];
  }
}

// MARK: - Plugins

export function renderPlugins(container, { status, descriptions, faults, onFault, onUpgrade }) {
  const described = new Map(((descriptions && descriptions.plugins) || []).map((plugin) => [plugin.name, plugin]));
  const rows = ((status && status.plugins) || []).map((plugin) => {
    const description = described.get(plugin.name) || {};
    const command = (description.command || []).map((part) => part.split('/').pop()).join(' ');
    const fault = (kind, label, title) => h('button', {
      class: 'fault', disabled: !faults, dataset: { fault: kind, plugin: plugin.name },
      title: faults ? title : 'Fault injection is off: start with --allow-faults',
      onclick: () => onFault(plugin.name, kind),
    }, label);
    return h('div', { class: 'plugin-card', dataset: { pluginCard: plugin.name, state: plugin.state } },
      h('div', { class: 'plugin-head' },
        h('span', { class: 'plugin-name', text: plugin.name }),
        h('span', { class: `pill state-${plugin.state}`, dataset: { pluginState: plugin.name }, text: plugin.state }),
        h('span', { class: 'muted', text: plugin.version ? `v${plugin.version}` : '' })),
      h('dl', { class: 'facts' },
        h('dt', { text: 'pid' }), h('dd', { text: plugin.pid ?? '—' }),
        h('dt', { text: 'restarts' }), h('dd', { text: String(plugin.restarts) }),
        h('dt', { text: 'startup' }), h('dd', { text: plugin.startupMicroseconds !== undefined ? `${(plugin.startupMicroseconds / 1000).toFixed(1)} ms` : '—' }),
        h('dt', { text: 'command' }), h('dd', { class: 'mono', title: (description.command || []).join(' '), text: command || '—' }),
        h('dt', { text: 'types' }), h('dd', { text: (description.coordinators || []).map((c) => `${c.type} (${c.kind})`).join(', ') || '—' })),
      plugin.error ? h('div', { class: 'plugin-error', text: plugin.error.message }) : null,
      h('div', { class: 'upgrade-row' },
        h('button', {
          class: 'upgrade', dataset: { upgrade: plugin.name },
          title: 'Start this entry\u2019s command again (a new build at the same path) beside the running version: it takes over with every instance if its routes still serve the app, else nothing changes (\u00a720.1)',
          onclick: () => onUpgrade(plugin.name),
        }, 'Upgrade'),
        plugin.upgrade
          ? h('span', { class: 'muted', dataset: { upgradePhase: plugin.name, phase: plugin.upgrade.phase }, text: `${plugin.upgrade.from || '?'} \u2192 ${plugin.upgrade.to || '?'}: ${plugin.upgrade.phase}` })
          : null),
      h('div', { class: 'fault-buttons' },
        fault('SIGKILL', 'Kill', 'SIGKILL its process group: a crash'),
        fault('SIGSTOP', 'Stop', 'SIGSTOP: a hang'),
        fault('SIGCONT', 'Continue', 'SIGCONT: the hang ends'),
        fault('restart', 'Restart', 'Stop it gracefully and start it again')),
      (description.stderr || []).length
        ? h('details', { class: 'stderr' }, h('summary', { text: `stderr (last ${description.stderr.length} lines)` }), h('pre', { text: description.stderr.join('\n') }))
        : null);
  });
  const note = faults ? [] : [h('p', { class: 'note', text: 'Fault buttons are off. Start with `switchyard run --studio --allow-faults` to kill, stop or restart plugins.' })];
  container.replaceChildren(...note, ...rows);
}

// MARK: - Traffic

export class Traffic {
  constructor(list, pluginFilter, methodFilter, pings) {
    this.list = list;
    this.pings = pings;
    this.pluginFilter = pluginFilter;
    this.methodFilter = methodFilter;
    this.outstanding = new Map(); // "plugin:direction:id" -> {time, method}
    this.plugins = new Set();
    this.lastPluginNavigate = null;
    pluginFilter.addEventListener('change', () => this.filter());
    methodFilter.addEventListener('input', () => this.filter());
    pings.addEventListener('change', () => this.filter());
  }

  /** One `trace/event` notification: its params and the line's text (for the message's exact bytes). */
  add(record, line) {
    if (record.dropped !== undefined) {
      this.append(h('div', { class: 'traffic-row dropped', dataset: { plugin: '', method: '' }, text: `${record.dropped} records dropped (this page fell behind)` }));
      return;
    }
    const plugin = record.plugin || '';
    if (!this.plugins.has(plugin)) {
      this.plugins.add(plugin);
      this.pluginFilter.append(h('option', { value: plugin, text: plugin }));
    }
    const message = record.message;
    const raw = message !== undefined ? rawTraceMessage(line) : record.raw;
    const time = Date.parse(record.time);
    let method = message && message.method;
    let latency = '';
    let kind = 'notification';
    if (message && message.id !== undefined && message.id !== null) {
      // A request from one side is answered from the other: match the answer to the request by id.
      const asker = message.method ? record.direction : record.direction === 'in' ? 'out' : 'in';
      const key = `${plugin}:${asker}:${JSON.stringify(message.id)}`;
      if (message.method) {
        kind = 'request';
        this.outstanding.set(key, { time, method: message.method });
        if (this.outstanding.size > 5000) this.outstanding.delete(this.outstanding.keys().next().value);
      } else {
        const request = this.outstanding.get(key);
        this.outstanding.delete(key);
        kind = message.error ? 'error' : 'response';
        method = request ? request.method : '';
        if (request) latency = `${Math.max(0, time - request.time)} ms`;
      }
    }
    if (record.error) kind = 'invalid';
    if (record.direction === 'in' && message && message.method === 'navigate') {
      this.lastPluginNavigate = { plugin, at: performance.now(), steps: message.params && message.params.steps };
    }
    const arrow = record.direction === 'in' ? '←' : '→';
    const row = h('div', {
      class: `traffic-row ${kind} ${record.direction}`, tabindex: '0', role: 'button', 'aria-expanded': 'false',
      dataset: { plugin, method: method || '', kind, direction: record.direction || '' },
    },
    h('span', { class: 'time', text: record.time.slice(11, 23) }),
    h('span', { class: 'plugin', text: plugin }),
    h('span', { class: 'direction', title: record.direction === 'in' ? 'plugin → host' : 'host → plugin', text: arrow }),
    h('span', { class: 'method', text: (method || '(invalid line)') + (kind === 'response' ? ' ✓' : kind === 'error' ? ' ✗' : '') }),
    h('span', { class: 'latency', text: latency }),
    h('pre', { class: 'raw-line', dataset: { raw: '' }, text: raw || '' }));
    const toggle = () => {
      const open = row.classList.toggle('open');
      row.setAttribute('aria-expanded', String(open));
      if (open && !row.querySelector('.json')) {
        row.append(h('pre', { class: 'json', text: pretty(message !== undefined ? message : record) }));
      }
    };
    row.addEventListener('click', toggle);
    row.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); toggle(); } });
    this.append(row);
  }

  append(row) {
    row.hidden = !this.matches(row);
    const stick = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 24;
    this.list.append(row);
    while (this.list.childElementCount > MAX_TRAFFIC) this.list.firstElementChild.remove();
    if (stick) this.list.scrollTop = this.list.scrollHeight;
  }

  matches(row) {
    const plugin = this.pluginFilter.value;
    const method = this.methodFilter.value.trim();
    if (!this.pings.checked && row.dataset.method === '$/ping') return false;
    return (!plugin || row.dataset.plugin === plugin) && (!method || (row.dataset.method || '').includes(method));
  }

  filter() { for (const row of this.list.children) row.hidden = !this.matches(row); }

  clear() { this.list.replaceChildren(); this.outstanding.clear(); }
}

// MARK: - Timeline

export class Timeline {
  constructor(list) {
    this.list = list;
    this.rows = new Map();
    this.causes = new Map();
  }

  /** What this page did to make `revision` (its answer says which revision it made). */
  cause(revision, text) {
    this.causes.set(revision, text);
    const row = this.rows.get(revision);
    if (row) row.querySelector('.cause').textContent = text;
  }

  add(previous, snapshot, guess) {
    if (this.rows.has(snapshot.revision)) return;
    const changes = previous ? diff(previous, snapshot) : ['the tree as it is now'];
    const cause = this.causes.get(snapshot.revision) || guess || 'another client, or the host (a restart, a restore)';
    const row = this.row(`r${snapshot.revision}`, cause, changes, snapshot.revision);
    this.rows.set(snapshot.revision, row);
    this.insert(row);
  }

  /**
   * The host's recent revisions (`tree/history`, §15.4), oldest first: the ones made before this page loaded get a
   * row each (their instances named from `snapshot`), the ones it saw get the host's word on what made them.
   */
  history(records, snapshot) {
    const names = new Map(snapshot.instances.map((node) => [node.id, `${node.plugin}.${node.type}#${node.id}`]));
    for (const record of records) {
      const text = describeRecord(record);
      this.causes.set(record.revision, text);
      const existing = this.rows.get(record.revision);
      if (existing) { existing.querySelector('.cause').textContent = text; continue; }
      const changes = (record.instances || []).map((id) => names.get(id) || `#${id} (gone since)`);
      if (record.instancesOmitted) changes.push(`and ${record.instancesOmitted} more`);
      const row = this.row(`r${record.revision}`, text, changes.length ? changes : ['no instance changed'], record.revision, record.time);
      row.dataset.history = 'true';
      this.rows.set(record.revision, row);
      this.insert(row);
    }
  }

  /** A change without a revision: a plugin's instances became unavailable or came back (§11). */
  note(cause, previous, snapshot) {
    this.prepend(this.row('·', cause, diff(previous, snapshot), snapshot.revision));
  }

  row(label, cause, changes, revision, time = new Date().toISOString()) {
    return h('li', { class: 'timeline-row', dataset: { revision: String(revision) } },
      h('span', { class: 'revision', text: label }),
      h('span', { class: 'time', title: time, text: time.slice(11, 23) }),
      h('span', { class: 'cause', text: cause }),
      h('ul', { class: 'changes' }, changes.map((change) => h('li', { text: change }))));
  }

  /** Newest first: a revision goes above every older one (history arrives after the rows a page already has). */
  insert(row) {
    const revision = Number(row.dataset.revision);
    const older = [...this.list.children].find((other) => Number(other.dataset.revision) < revision);
    if (older) this.list.insertBefore(row, older); else this.list.append(row);
    this.trim();
  }

  prepend(row) {
    this.list.prepend(row);
    this.trim();
  }

  trim() {
    while (this.list.childElementCount > MAX_TIMELINE) {
      const last = this.list.lastElementChild;
      this.rows.delete(Number(last.dataset.revision));
      last.remove();
    }
  }
}

/** A history record in words: what made the revision, who asked, and the steps (`action by todos: complete …`). */
function describeRecord(record) {
  return `${record.cause}${record.by ? ` by ${record.by}` : ''}: ${record.summary}`;
}

/** What changed between two snapshots, in words: instances that came and went, entries, tabs, availability. */
export function diff(before, after) {
  const old = new Map(before.instances.map((node) => [node.id, node]));
  const now = new Map(after.instances.map((node) => [node.id, node]));
  const name = (node) => `${node.plugin}.${node.type}#${node.id}`;
  const changes = [];
  for (const [id, node] of now) {
    const was = old.get(id);
    if (!was) { changes.push(`+ ${name(node)}`); continue; }
    if (was.status !== node.status) changes.push(`${name(node)} ${node.status === 'unavailable' ? 'unavailable' : 'available again'}`);
    if (was.selectedTab !== node.selectedTab) changes.push(`${name(node)} tab ${was.selectedTab} → ${node.selectedTab}`);
    const before = new Map(entries(was).map(([, entry]) => [entry.entry, entry]));
    const after = new Map(entries(node).map(([, entry]) => [entry.entry, entry]));
    for (const [entryId, entry] of after) if (!before.has(entryId)) changes.push(`${name(node)} + ${entry.transition} ${entry.route}${compact(entry.params) ? ' ' + compact(entry.params) : ''}`);
    for (const [entryId, entry] of before) if (!after.has(entryId)) changes.push(`${name(node)} − ${entry.transition} ${entry.route}`);
  }
  for (const [id, node] of old) if (!now.has(id)) changes.push(`− ${name(node)}`);
  return changes.length ? changes : ['no visible change'];
}
