// Switchyard Studio: wires the host connection to the app pane and the inspector.
import { HostConnection } from './rpc.js';
import { Phone } from './phone.js';
import { renderTree, renderPlugins, Traffic, Timeline } from './inspector.js';
import { h } from './dom.js';

const base = new URL('.', location.href);
const connection = new HostConnection(base.href.replace(/^http/, 'ws') + 'ws');
const $ = (selector) => document.querySelector(selector);

const state = { snapshot: null, status: null, descriptions: null, faults: false, inFlight: [] };
let declarations = new Map();

const toast = $('#toast');
let toastTimer = 0;
function say(text, kind = 'info') {
  toast.textContent = text;
  toast.dataset.kind = kind;
  toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toast.hidden = true; }, 6000);
}
function report(error) {
  const rpc = error && error.rpc;
  say(rpc ? `${rpc.message} (${rpc.code})` : String((error && error.message) || error), 'error');
}

/** Sends a request that changes the tree and records, for the timeline, what made the revision it answers with. */
async function change(method, params, cause) {
  state.inFlight.push(cause);
  const before = state.snapshot ? state.snapshot.revision : -1;
  try {
    const result = await connection.call(method, params);
    // A request that changed nothing (a re-tap) keeps the revision: it made none.
    if (result && result.revision !== undefined && result.revision > before) timeline.cause(result.revision, cause);
    return result;
  } finally {
    state.inFlight.splice(state.inFlight.indexOf(cause), 1);
  }
}

const phone = new Phone($('#screen'), {
  navigate: (instance, steps, cause) => change('navigate', { instance, steps }, `navigate on #${instance}: ${cause}`),
  dismiss: (instance, entry, cause) => change('user/dismissed', { instance, entry }, `user dismissed e${entry} (${cause})`),
  action: (instance, entry, action, params) =>
    change('user/action', params ? { instance, entry, action, params } : { instance, entry, action }, `action ${action} on e${entry}`),
  declaration: (plugin, type) => declarations.get(`${plugin}/${type}`),
  report,
});
const traffic = new Traffic($('#traffic-list'), $('#traffic-plugin'), $('#traffic-method'), $('#traffic-pings'));
const timeline = new Timeline($('#timeline-list'));

function renderAll() {
  if (state.snapshot) {
    phone.render(state.snapshot);
    renderTree($('#tree'), state.snapshot);
    $('#revision').textContent = `revision ${state.snapshot.revision}`;
  }
  renderPluginPane();
}

function renderPluginPane() {
  renderPlugins($('#plugins'), {
    status: state.status, descriptions: state.descriptions, faults: state.faults,
    onFault: (plugin, kind) => {
      const request = kind === 'restart' ? connection.call('plugin/restart', { plugin }) : connection.call('plugin/signal', { plugin, signal: kind });
      say(kind === 'restart' ? `restarting ${plugin}…` : `${kind} → ${plugin}`);
      request.then((result) => say(kind === 'restart' ? `${plugin} restarted (pid ${result.pid})` : `${kind} sent to ${plugin} (pid ${result.pid})`)).catch(report);
    },
    onUpgrade: (plugin) => {
      say(`upgrading ${plugin}: its new build starts beside the running one…`);
      change('plugin/upgrade', { plugin }, `upgrade of ${plugin}`).then((result) => say(describeUpgrade(result))).catch(report);
    },
  });
}

/** What an upgrade's answer (§20.1) means, in a sentence. */
function describeUpgrade(result) {
  const versions = `${result.from.version} (pid ${result.from.pid}) \u2192 ${result.to.version} (pid ${result.to.pid})`;
  if (result.outcome === 'rolledBack') return `${result.plugin} rolled back to ${result.from.version}: ${result.reason || 'the new version failed'}`;
  const breaking = result.changes.filter((change) => change.breaking).length;
  const probation = result.probation.state === 'off' ? 'no probation' : `on probation for ${(result.probation.milliseconds / 1000).toFixed(0)} s`;
  return `${result.plugin} upgraded ${versions}: ${result.instances} instance(s) moved in revision ${result.revision}, ${result.changes.length} contract change(s)${breaking ? ` (${breaking} breaking, unused)` : ''}, ${probation}`;
}

async function loadDescriptions() {
  state.descriptions = await connection.call('host/plugins');
  declarations = new Map();
  for (const plugin of state.descriptions.plugins) {
    for (const coordinator of plugin.coordinators || []) declarations.set(`${plugin.name}/${coordinator.type}`, coordinator);
  }
  state.faults = Boolean(connection.hello && connection.hello.faults && state.descriptions.faults);
}

// MARK: - Deferred deep links (Protocol/README.md §13.5)

const pendingLink = { id: undefined };
const describeCondition = (until) => {
  const subject = until.instance !== undefined ? ` of #${until.instance}` : until.type ? ` of ${until.plugin ? until.plugin + '.' : ''}${until.type}` : '';
  return until.root !== undefined ? `root '${until.root}'${subject} is active` : `tab '${until.tab}'${subject} is shown`;
};
/** The banner shows the link waiting, if any, with a button that cancels it. */
function showPendingLink(link) {
  pendingLink.id = link ? link.id : undefined;
  $('#link-banner').hidden = !link;
  if (link) $('#link-banner-text').textContent = `⏳ ${link.url} waits until ${describeCondition(link.until)}`;
}
const linkOutcomes = {
  applied: (change) => `deep link ${change.link.url} applied (revision ${change.revision})`,
  replaced: (change) => `deep link ${change.link.url} replaced by ${change.replacedBy}`,
  timedOut: (change) => `deep link ${change.link.url} timed out`,
  cancelled: (change) => `deep link ${change.link.url} cancelled`,
  invalid: (change) => `deep link ${change.link.url} is invalid after all: ${change.error ? change.error.message : ''}`,
};
function linkChanged(change) {
  if (change.state === 'pending') return showPendingLink(change.link);
  if (pendingLink.id === change.link.id) showPendingLink(null);
  say(linkOutcomes[change.state](change), change.state === 'invalid' || change.state === 'timedOut' ? 'error' : 'info');
}
$('#link-cancel').addEventListener('click', () => {
  connection.call('deepLink/cancel', pendingLink.id === undefined ? {} : { id: pendingLink.id }).catch(report);
});

connection.addEventListener('state', async (event) => {
  const { connected } = event.detail;
  document.body.dataset.connection = connected ? 'connected' : 'disconnected';
  $('#connection').textContent = connected ? 'connected' : 'disconnected — reconnecting…';
  $('#disconnected').hidden = connected;
  if (!connected) return;
  $('#socket').textContent = event.detail.hello.socket;
  try {
    await connection.call('trace/subscribe', {});
    const [snapshot, status, waiting] = await Promise.all([
      connection.call('tree/subscribe', {}), connection.call('host/status'), connection.call('deepLink/pending'), loadDescriptions(),
    ]);
    showPendingLink(waiting.pending);
    // The revisions made before this page connected (or while it was away), with what made each (§15.4).
    await loadHistory(snapshot, state.snapshot ? state.snapshot.revision : undefined);
    if (state.snapshot && state.snapshot.revision !== snapshot.revision) timeline.add(state.snapshot, snapshot, 'while this page was disconnected');
    else if (!state.snapshot) timeline.add(null, snapshot, 'the tree when this page connected');
    state.snapshot = snapshot;
    state.status = status;
    renderAll();
  } catch (error) {
    report(error);
  }
});

/** The host's record of the revisions after `after` (all it keeps when undefined), into the timeline. */
async function loadHistory(snapshot, after) {
  const history = await connection.call('tree/history', after === undefined ? {} : { after });
  timeline.history(history.revisions.filter((record) => record.revision <= snapshot.revision), snapshot);
}

let descriptionsTimer = 0;
connection.addEventListener('notification', (event) => {
  const { method, params, text } = event.detail;
  switch (method) {
    case 'tree/changed': {
      if (!params.snapshot) return;
      const previous = state.snapshot;
      const plugin = traffic.lastPluginNavigate;
      const guess = state.inFlight.length ? `this page: ${state.inFlight[state.inFlight.length - 1]}`
        : plugin && performance.now() - plugin.at < 1500 ? `plugin ${plugin.plugin}: navigate ${JSON.stringify(plugin.steps || [])}`
        : undefined;
      state.snapshot = params.snapshot;
      timeline.add(previous, params.snapshot, guess);
      // The host knows what made the revision (§15.4): its word replaces the page's guess.
      if (previous) loadHistory(params.snapshot, previous.revision).catch(() => {});
      phone.render(state.snapshot);
      renderTree($('#tree'), state.snapshot);
      $('#revision').textContent = `revision ${state.snapshot.revision}`;
      break;
    }
    case 'plugin/changed': {
      if (!state.status) return;
      const index = state.status.plugins.findIndex((plugin) => plugin.name === params.name);
      if (index >= 0) state.status.plugins[index] = params; else state.status.plugins.push(params);
      renderPluginPane();
      refreshAvailability(params);
      // A restarted plugin has a new pid and new stderr lines; its declarations may be new if it never served.
      clearTimeout(descriptionsTimer);
      descriptionsTimer = setTimeout(() => loadDescriptions().then(renderAll).catch(() => {}), 300);
      break;
    }
    case 'trace/event':
      traffic.add(params, text);
      break;
    case 'deepLink/changed':
      linkChanged(params);
      break;
    default:
      break;
  }
});

/**
 * A plugin's state changed: its instances' availability is part of every snapshot but makes no revision (§11), so
 * the page reads the tree again and records what changed.
 */
async function refreshAvailability(plugin) {
  try {
    const snapshot = await connection.call('tree/get');
    const previous = state.snapshot;
    if (!previous || snapshot.revision < previous.revision) return;
    const key = (tree) => tree.instances.map((node) => `${node.id}:${node.status}`).join(',');
    if (snapshot.revision === previous.revision && key(snapshot) === key(previous)) return;
    state.snapshot = snapshot;
    if (snapshot.revision === previous.revision) timeline.note(`plugin ${plugin.name}: ${plugin.state}`, previous, snapshot);
    else timeline.add(previous, snapshot, `plugin ${plugin.name}: ${plugin.state}`);
    phone.render(snapshot);
    renderTree($('#tree'), snapshot);
  } catch {
    // Disconnected meanwhile: the next connection starts from a fresh snapshot.
  }
}

// MARK: - Address bar

const address = $('#address');
const verdict = $('#address-verdict');
let validateTimer = 0;
let validation = 0;
address.addEventListener('input', () => {
  clearTimeout(validateTimer);
  const url = address.value.trim();
  const form = $('#address-form');
  if (!url) { form.dataset.valid = ''; verdict.textContent = ''; return; }
  form.dataset.valid = 'checking';
  validateTimer = setTimeout(async () => {
    const ticket = ++validation;
    try {
      const result = await connection.call('validate', { url });
      if (ticket !== validation) return;
      form.dataset.valid = String(result.valid);
      verdict.textContent = result.valid
        ? `✓ ${(result.steps || []).map((step) => step.op + (step.route ? ' ' + step.route : step.tab ? ' ' + step.tab : '')).join(' › ')}`
        : `✗ ${result.error ? result.error.message : 'invalid'}`;
    } catch (error) {
      if (ticket !== validation) return;
      form.dataset.valid = 'false';
      verdict.textContent = `✗ ${error.message}`;
    }
  }, 120);
});
$('#address-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const url = address.value.trim();
  if (!url) return;
  // Opened as an app opens a link it was sent: one that cannot be applied yet (signed out) waits (the banner).
  change('open', { url, defer: true }, `open ${url}`)
    .then((result) => { if (!result.deferred) say(`opened ${url}`); })
    .catch(report);
});

// MARK: - Inspector tabs and keyboard

const tabs = [...document.querySelectorAll('[role=tab][data-pane]')];
function selectPane(tab) {
  for (const other of tabs) {
    const selected = other === tab;
    other.setAttribute('aria-selected', String(selected));
    other.tabIndex = selected ? 0 : -1;
    $(`#${other.dataset.pane}`).hidden = !selected;
  }
}
for (const tab of tabs) {
  tab.addEventListener('click', () => selectPane(tab));
  tab.addEventListener('keydown', (event) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (!step) return;
    const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
    selectPane(next);
    next.focus();
  });
}
selectPane(tabs[0]);
$('#traffic-clear').addEventListener('click', () => traffic.clear());

document.addEventListener('keydown', (event) => {
  const typing = ['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement && document.activeElement.tagName);
  if (event.key === '/' && !typing) { event.preventDefault(); address.focus(); address.select(); return; }
  if (typing) return;
  const top = [...document.querySelectorAll('#screen > :not([inert])')].pop();
  if (event.key === 'Escape') top && top.querySelector('[data-dismiss]') && top.querySelector('[data-dismiss]').click();
  if (event.key === 'ArrowLeft' && event.altKey) {
    const back = top && [...top.querySelectorAll('[data-back]')].pop();
    if (back) back.click();
  }
});

$('#help').addEventListener('click', () => { $('#keys').hidden = !$('#keys').hidden; });
document.body.append(h('span', { hidden: true, id: 'loaded', dataset: { loaded: 'true' } }));
connection.start();
