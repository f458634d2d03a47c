// The app pane: the composed tree drawn the way a phone shows it. Each stack is a navigation stack whose top entry
// shows (a navigation bar: the screen's title, a back button named after the screen below), modal and full-screen
// entries are sheets stacked over the whole screen, a tabs coordinator is a tab bar (its tab items' titles and
// symbols), a wrapper shows its child. A screen with content (§21) is drawn from it (content.js); one without is a
// card with its name, props and declared actions. Every screen keeps a developer drawer with the routes its
// coordinators declare.
import { h, compact } from './dom.js';
import { paramForm } from './forms.js';
import { ContentRenderer } from './content.js';
import { symbol } from './symbols.js';

export class Phone {
  /**
   * @param ui {navigate(instance, steps, cause), dismiss(instance, entry, cause), action(instance, entry, name, params),
   *            declaration(plugin, type), report(error)}
   */
  constructor(screen, ui) {
    this.screen = screen;
    this.ui = ui;
    this.openDrawers = new Set();
    this.openForm = null;
    /** The forms drawn by the last render: an open form whose screen left is closed, not shown again later. */
    this.drawnForms = new Set();
    this.content = new ContentRenderer({
      action: (instance, entry, name, params) => this.ui.action(instance, entry, name, params),
      changed: () => { if (this.snapshot) this.render(this.snapshot); },
    });
  }

  /** Runs a request started by a tap; a failure is shown, never left unhandled. */
  act(promise) { promise.catch((error) => this.ui.report(error)); }

  render(snapshot) {
    this.snapshot = snapshot;
    this.byId = new Map(snapshot.instances.map((node) => [node.id, node]));
    this.content.prune(snapshot);
    this.drawnForms = new Set();
    // The page is drawn anew for every change: the field being typed in keeps its focus and caret.
    const focused = document.activeElement && this.screen.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = focused && focused.dataset ? focused.dataset.inputKey : undefined;
    const caret = focusKey && typeof focused.selectionStart === 'number' ? [focused.selectionStart, focused.selectionEnd] : null;
    const { view, sheets } = this.instance(snapshot.root, null);
    const layers = [h('div', { class: 'base' }, view)];
    sheets.forEach((sheet, index) => {
      layers.push(h('div', { class: 'scrim', 'aria-hidden': 'true' }));
      sheet.style.setProperty('--depth', String(index));
      layers.push(sheet);
    });
    // Only the top layer takes focus and clicks; the ones under it are inert, as on a phone.
    for (const layer of layers.slice(0, -1)) layer.inert = true;
    this.screen.replaceChildren(...layers);
    this.screen.dataset.revision = String(snapshot.revision);
    if (this.openForm && !this.drawnForms.has(this.openForm)) this.openForm = null;
    if (focusKey) {
      const again = this.screen.querySelector(`[data-input-key="${CSS.escape(focusKey)}"]`);
      if (again) {
        again.focus();
        if (caret && again.setSelectionRange) again.setSelectionRange(caret[0], caret[1]);
      }
    }
  }

  /** What a navigation bar calls an entry: its screen's title, else the screen's name, else the route. */
  titleOf(entry) {
    const screen = entry && entry.content && entry.content.screen;
    return (screen && (screen.title || screen.name)) || (entry ? entry.route : '');
  }

  // MARK: - Coordinators

  instance(id, back) {
    const node = this.byId.get(id);
    if (!node) return { view: this.missing(`instance #${id} is not in the snapshot`), sheets: [] };
    if (node.pending || !node.kind) return { view: this.placeholder(node, back), sheets: [] };
    const rendered =
      node.kind === 'stack' ? this.stack(node, back)
      : node.kind === 'tabs' ? this.tabs(node, back)
      : this.entry(node, node.child, back);
    if (node.status === 'unavailable') rendered.view = this.unavailable(node, rendered.view);
    return rendered;
  }

  stack(node, back) {
    const layers = [];
    for (const entry of [node.root, ...(node.entries || [])].filter(Boolean)) {
      if (layers.length === 0 || entry.transition === 'modal' || entry.transition === 'fullScreen') layers.push([entry]);
      else layers[layers.length - 1].push(entry);
    }
    let view = this.missing('an empty stack');
    const sheets = [];
    layers.forEach((layer, index) => {
      const top = layer[layer.length - 1];
      const below = layer[layer.length - 2];
      const here = below
        ? { label: this.titleOf(below), run: () => this.act(this.ui.dismiss(node.id, top.entry, `back from ${top.route}`)) }
        : index === 0 ? back : null;
      const rendered = this.entry(node, top, here);
      if (index === 0) view = rendered.view;
      else sheets.push(this.sheet(node, layer[0], rendered.view));
      sheets.push(...rendered.sheets);
    });
    return { view, sheets };
  }

  tabs(node, back) {
    const selected = (node.tabs || []).find((tab) => tab.route === node.selectedTab) || (node.tabs || [])[0];
    const content = selected ? this.entry(node, selected, back) : { view: this.missing('no tabs'), sheets: [] };
    const bar = h('nav', { class: 'tabbar', role: 'tablist', 'aria-label': `${node.plugin}.${node.type} tabs` },
      (node.tabs || []).map((tab) => {
        const isSelected = tab.route === node.selectedTab;
        // The tab item its route declares (§21.4): title and symbol; without one, the route's name and initial.
        const item = (this.route(node, tab.route) || {}).tabItem;
        const icon = item && item.symbol ? symbol(item.symbol, 'symbol tab-symbol') : null;
        return h('button', {
          class: `tab${isSelected ? ' selected' : ''}`, role: 'tab', 'aria-selected': String(isSelected),
          dataset: { tab: tab.route, instance: String(node.id), selected: String(isSelected) },
          onclick: () => this.act(this.ui.navigate(node.id, [{ op: 'selectTab', tab: tab.route }], isSelected ? `re-tap tab ${tab.route}` : `tab ${tab.route}`)),
        },
        icon || h('span', { class: 'tab-icon', 'aria-hidden': 'true', text: tab.route.slice(0, 1).toUpperCase() }),
        h('span', { class: 'tab-label', text: item ? item.title : tab.route }),
        tab.badge ? h('span', { class: 'badge', dataset: { badge: tab.route }, text: tab.badge }) : null);
      }));
    return { view: h('div', { class: 'tabs-view', dataset: { instance: String(node.id) } }, h('div', { class: 'tab-content' }, content.view), bar), sheets: content.sheets };
  }

  /** What an entry shows: its screen as a page, or its child coordinator (which draws its own bars). */
  entry(node, entry, back) {
    if (!entry) return { view: this.missing('nothing to show'), sheets: [] };
    const content = entry.content || {};
    if (content.coordinator !== undefined) return this.instance(content.coordinator, back);
    return { view: this.page(node, entry, back), sheets: [] };
  }

  sheet(node, entry, view) {
    const presentation = entry.presentation || {};
    const canDismiss = !presentation.interactiveDismissDisabled;
    const full = entry.transition === 'fullScreen';
    // A sheet that declares only smaller detents than "large" opens at half height, as on a phone.
    const detents = Array.isArray(presentation.detents) ? presentation.detents : [];
    const medium = !full && detents.length > 0 && !detents.includes('large');
    return h('div', {
      class: `sheet${full ? ' full' : ''}${medium ? ' medium' : ''}`, role: 'dialog', 'aria-modal': 'true', 'aria-label': entry.route,
      dataset: { sheetInstance: String(node.id), sheetEntry: String(entry.entry), sheetRoute: entry.route },
    },
    h('div', { class: 'sheet-bar' },
      canDismiss
        ? h('button', {
          class: 'sheet-dismiss', 'aria-label': `Dismiss ${entry.route}`, dataset: { dismiss: String(entry.entry) },
          onclick: () => this.act(this.ui.dismiss(node.id, entry.entry, `dismissed ${entry.route}`)),
        }, full ? '✕ Close' : 'Done')
        : h('span', { class: 'sheet-locked', text: 'dismiss disabled' }),
      full ? null : h('span', { class: 'grabber', 'aria-hidden': 'true' })),
    h('div', { class: 'sheet-content' }, view));
  }

  // MARK: - Screens

  page(node, entry, back) {
    const screen = (entry.content && entry.content.screen) || { name: '?' };
    const declared = this.route(node, entry.route);
    const key = `${node.id}:${entry.entry}`;
    const drawer = h('details', { class: 'drawer', dataset: { drawer: key } },
      h('summary', { text: 'Developer: routes' }), ...this.routeLists(node, entry));
    drawer.open = this.openDrawers.has(key);
    drawer.addEventListener('toggle', () => { if (drawer.open) this.openDrawers.add(key); else this.openDrawers.delete(key); });
    const actions = (declared && declared.actions) || [];
    const content = Array.isArray(screen.content) ? screen.content : null;
    const body = content
      ? [this.content.render(node, entry, content)]
      : [h('div', { class: 'screen-card' },
        h('div', { class: 'screen-name', text: screen.name }),
        this.props(screen.props),
        entry.params && Object.keys(entry.params).length ? h('div', { class: 'entry-params', text: `params ${compact(entry.params)}` }) : null),
      actions.length
        ? h('div', { class: 'actions' }, actions.map((action) => this.actionButton(node, entry, action)))
        : null];
    return h('section', {
      class: `page${content ? ' drawn' : ''}`, 'aria-label': `${screen.title || screen.name} (${entry.route})`,
      dataset: { page: '', instance: String(node.id), entry: String(entry.entry), route: entry.route, screen: screen.name },
    },
    h('header', { class: 'navbar' },
      back
        ? h('button', { class: 'back', 'aria-label': `Back to ${back.label}`, dataset: { back: String(entry.entry) }, onclick: back.run }, '‹ ', h('span', { text: back.label }))
        : h('span', { class: 'back-spacer' }),
      h('h2', { class: 'title', text: screen.title || screen.name }),
      h('span', { class: 'owner', title: `${node.plugin}.${node.type}#${node.id} · route ${entry.route}`, text: node.plugin })),
    h('div', { class: 'page-body' }, ...body, drawer));
  }

  props(props) {
    if (props === undefined || props === null) return null;
    if (typeof props !== 'object' || Array.isArray(props)) return h('pre', { class: 'props-raw', text: JSON.stringify(props) });
    const keys = Object.keys(props);
    if (keys.length === 0) return null;
    return h('dl', { class: 'props' }, keys.flatMap((key) => [
      h('dt', { text: key }),
      h('dd', { text: typeof props[key] === 'string' ? props[key] : JSON.stringify(props[key]) }),
    ]));
  }

  actionButton(node, entry, action) {
    const key = `action:${node.id}:${entry.entry}:${action.name}`;
    const run = (params) => this.ui.action(node.id, entry.entry, action.name, params);
    return this.withForm(key, h('button', { class: 'action', dataset: { action: action.name, actionEntry: String(entry.entry) } }, action.name), action.params, run, action.name, shownBy(entry));
  }

  /** The routes of the page's coordinator and of each ancestor, nearest first: each a navigate chain away. */
  routeLists(node, entry) {
    const lists = [];
    for (let current = node; current; current = current.parent ? this.byId.get(current.parent.instance) : null) {
      const declaration = this.ui.declaration(current.plugin, current.type);
      const routes = (declaration && declaration.routes) || [];
      lists.push(h('div', { class: 'route-list' },
        h('div', { class: 'route-owner', text: `${current.plugin}.${current.type}#${current.id} (${current.kind || 'pending'})` }),
        routes.length === 0 ? h('div', { class: 'muted', text: 'no declared routes known' }) : null,
        routes.map((route) => this.routeButton(current, route, entry))));
    }
    return lists;
  }

  /** A declared route as a button; its form (one per screen: it closes when the screen leaves) starts from what
   * the screen of `page` shows. */
  routeButton(node, route, page) {
    const step = stepFor(route);
    const label = h('span', {}, h('span', { class: 'route-name', text: route.name }), h('span', { class: 'transition', text: route.transition }),
      route.deepLink !== undefined ? h('span', { class: 'pattern', text: route.deepLink === '' ? '""' : route.deepLink }) : null,
      route.target ? h('span', { class: 'target', text: `→ ${route.target.plugin || node.plugin}.${route.target.type}` }) : null);
    const button = h('button', { class: 'route', disabled: !step, dataset: { routeButton: `${node.id}:${route.name}` }, title: step ? '' : 'not a navigation a user starts' }, label);
    if (!step) return button;
    const run = (params) => this.ui.navigate(node.id, [step(params)], `${step(params).op} ${route.name}${params && Object.keys(params).length ? ' ' + compact(params) : ''}`);
    const params = route.transition === 'tab' ? [] : route.params;
    return this.withForm(`route:${page.entry}:${node.id}:${route.name}`, button, params, run, route.name, shownBy(page));
  }

  /**
   * A button that runs at once, or opens a form for its declared params first, filled in with what the screen shows
   * (`shown`: its entry's params and its props), so a todo's `share` asks for nothing the todo already has.
   */
  withForm(key, button, params, run, name, shown = {}) {
    const wrapper = h('div', { class: 'with-form' }, button);
    const needsForm = Array.isArray(params) && params.length > 0;
    this.drawnForms.add(key);
    const showForm = () => {
      this.openForm = key;
      const form = paramForm(params, {
        submitLabel: name, testName: key, initial: shown,
        onSubmit: async (values) => { await run(values); this.openForm = null; form.remove(); },
        onCancel: () => { this.openForm = null; form.remove(); button.focus(); },
      });
      wrapper.append(form);
    };
    button.addEventListener('click', () => {
      if (!needsForm) { this.act(run(undefined)); return; }
      if (wrapper.querySelector('form')) return;
      showForm();
    });
    if (needsForm && this.openForm === key) queueMicrotask(showForm);
    return wrapper;
  }

  route(node, name) {
    const declaration = this.ui.declaration(node.plugin, node.type);
    return declaration && (declaration.routes || []).find((route) => route.name === name);
  }

  // MARK: - Placeholders

  unavailable(node, view) {
    return h('div', { class: 'unavailable-wrap', dataset: { unavailable: String(node.id) } },
      h('div', { class: 'unavailable-banner', role: 'status' },
        h('strong', { text: `${node.plugin} unavailable` }), ' ', h('span', { text: node.unavailableReason || '' })),
      view);
  }

  placeholder(node, back) {
    return h('section', { class: 'page placeholder', dataset: { page: '', instance: String(node.id), placeholder: node.plugin } },
      h('header', { class: 'navbar' },
        back ? h('button', { class: 'back', onclick: back.run }, '‹ ', h('span', { text: back.label })) : h('span', { class: 'back-spacer' }),
        h('h2', { class: 'title', text: node.type }), h('span', { class: 'owner', text: node.plugin })),
      h('div', { class: 'page-body' }, h('div', { class: 'screen-card waiting', dataset: { unavailable: String(node.id) } },
        h('div', { class: 'screen-name', text: `Waiting for ${node.plugin}` }),
        h('p', { class: 'muted', text: node.unavailableReason || 'the plugin is not serving' }))));
  }

  missing(text) { return h('div', { class: 'page missing', text }); }
}

/** What a screen shows that a form may start from: its entry's params, then its props (the props win). */
function shownBy(entry) {
  const screen = (entry && entry.content && entry.content.screen) || {};
  const objectOr = (value) => (value && typeof value === 'object' && !Array.isArray(value) ? value : {});
  return { ...objectOr(entry && entry.params), ...objectOr(screen.props) };
}

/** The step a user's tap on a declared route runs on its coordinator; null for one a user does not start. */
function stepFor(route) {
  switch (route.transition) {
    case 'push': case 'modal': case 'fullScreen':
      return (params) => (params ? { op: 'route', route: route.name, params } : { op: 'route', route: route.name });
    case 'root':
      return (params) => (params ? { op: 'setRoot', route: route.name, params } : { op: 'setRoot', route: route.name });
    case 'tab':
      return () => ({ op: 'selectTab', tab: route.name });
    default:
      return null;
  }
}
