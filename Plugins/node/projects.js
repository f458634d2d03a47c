#!/usr/bin/env node
'use strict';
// The projects tab (Node.js): a list, a project pushed as its own coordinator, its members pushed inside it. Its
// screens are data (spec §21): a project's row opens it, its Members row opens the members, and the coordinator
// decides each step (an archived project's members are refused by a guard, and the page shows why at the row).
const { Plugin, Coordinator, coordinator, reject, routes, ui } = require('../../Protocol/sdk/node');

const plugin = new Plugin('projects', '1.0.0');

/** Stands for a database or a web service: every lookup is asynchronous, as in most Node code. */
const store = {
  projects: new Map([
    ['p1', { name: 'Apollo', members: ['Ada Lovelace', 'Grace Hopper', 'Margaret Hamilton'] }],
    ['p2', { name: 'Gemini', archived: true, members: ['Gus Grissom'] }],
    ['p7', { name: 'Voyager', members: ['Carl Sagan', 'Linda Morabito'] }],
  ]),
  async find(id) { return this.projects.get(id); },
};

class Projects extends Coordinator {
  static typeName = 'projects';
  static initial = 'list';
  static routes = [
    routes.root('list', { actions: [{ name: 'open', params: ['id'] }] }),
    routes.push('project', { deepLink: ':id', params: ['id'], target: 'project', targetParams: ['id'] }),
  ];
  list() {
    const rows = [...store.projects].map(([id, project]) => ui.row(project.name, {
      symbol: 'folder', detail: project.archived ? 'archived' : `${project.members.length} members`,
      action: ui.action('open', { params: { id } }),
    }));
    return ui.screen('ProjectList', { title: 'Projects', props: { count: store.projects.size }, content: [ui.list(...rows)] });
  }
  // Async route methods: the host's request is answered when the lookup is done; a rejection is a guard's refusal.
  async project({ id }) {
    if (!(await store.find(id))) throw reject(`there is no project '${id}'`);
    return coordinator('project', { params: { id } });
  }
  action(name, params) {
    if (name === 'open') return [{ op: 'route', route: 'project', params: { id: params.id } }];
    return undefined;
  }
}

class Project extends Coordinator {
  static typeName = 'project';
  static initial = 'overview';
  // What a project is opened with, here and by other plugins (the todos' project links): checked before anything runs.
  static creationParams = [{ name: 'id', type: 'string' }];
  static routes = [
    routes.root('overview', { actions: ['members', 'settings'] }),
    // The members screen's "owner" button opens the owner's profile (another plugin); settings' "close" dismisses.
    routes.push('members', { deepLink: 'members', actions: ['showOwner'] }),
    routes.modal('settings', {
      deepLink: 'settings', actions: ['close'], transitions: ['fullScreen'], presentation: { detents: ['medium', 'large'] },
    }),
    routes.push('owner', { deepLink: 'owner', target: 'profile', plugin: 'profile' }),
  ];
  async overview() {
    const id = (this.params || {}).id;
    const project = await store.find(id);
    const name = project ? project.name : id;
    // A title fits a navigation bar; the props keep the whole name.
    const label = String(name ?? 'Project');
    const shown = label.length > 60 ? `${label.slice(0, 59)}…` : label;
    return ui.screen('Project', {
      title: shown, props: { id, name },
      content: [
        ui.text(shown, { style: 'title' }),
        ui.text(project && project.archived ? 'Archived' : 'Active', { style: 'caption' }),
        ui.list(ui.section([
          ui.row('Members', { symbol: 'person.2', badge: project ? String(project.members.length) : undefined, action: ui.action('members') }),
          ui.row('Settings', { symbol: 'gearshape', action: ui.action('settings') }),
        ])),
      ],
    });
  }
  async members() {
    const id = (this.params || {}).id;
    const project = await store.find(id);
    // A guard: an archived project's members are not shown.
    if (project?.archived) throw reject(`project '${id}' is archived`);
    return ui.screen('Members', {
      title: 'Members', props: { project: id },
      content: [
        ui.list(ui.section((project ? project.members : []).map((member) => ui.row(member, { symbol: 'person.crop.circle' })),
          { header: project ? project.name : id })),
        ui.button('Owner', ui.action('showOwner'), { symbol: 'person.crop.circle' }),
      ],
    });
  }
  owner() { return coordinator('profile', { plugin: 'profile' }); }
  settings() {
    return ui.screen('ProjectSettings', {
      title: 'Project settings',
      content: [ui.toggle('notify', 'Notifications', { value: true }), ui.button('Close', ui.action('close'), { style: 'primary' })],
    });
  }
  appeared(entry) { console.error(`projects: entry ${entry} appeared`); }
  action(name) {
    if (name === 'members') return [{ op: 'route', route: 'members' }];
    if (name === 'settings') return [{ op: 'route', route: 'settings' }];
    if (name === 'showOwner') return [{ op: 'route', route: 'owner' }];
    if (name === 'close') return [{ op: 'dismiss' }];
    return undefined;
  }
}

plugin.register(Projects);
plugin.register(Project);
plugin.run();
