#!/usr/bin/env node
'use strict';
// The projects tab (Node.js): a list, a project pushed as its own coordinator, its members pushed inside it.
const { Plugin, Coordinator, screen, coordinator, reject, routes } = require('../../Protocol/sdk/node');

const plugin = new Plugin('projects', '1.0.0');

/** Stands for a database or a web service: every lookup is asynchronous, as in most Node code. */
const store = {
  projects: new Map([['p1', { name: 'Apollo' }], ['p2', { name: 'Gemini', archived: true }], ['p7', { name: 'Voyager' }]]),
  async find(id) { return this.projects.get(id); },
};

class Projects extends Coordinator {
  static typeName = 'projects';
  static initial = 'list';
  static routes = [
    routes.root('list'),
    routes.push('project', { deepLink: ':id', params: ['id'], target: 'project', targetParams: ['id'] }),
  ];
  list() { return screen('ProjectList', { count: store.projects.size }); }
  // Async route methods: the host's request is answered when the lookup is done; a rejection is a guard's refusal.
  async project({ id }) {
    if (!(await store.find(id))) throw reject(`there is no project '${id}'`);
    return coordinator('project', { params: { id } });
  }
}

class Project extends Coordinator {
  static typeName = 'project';
  static initial = 'overview';
  // What a project is opened with, here and by other plugins (the todos' project links): checked before anything runs.
  static creationParams = [{ name: 'id', type: 'string' }];
  static routes = [
    routes.root('overview'),
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
    return screen('Project', { id, name: project ? project.name : id });
  }
  async members() {
    const id = (this.params || {}).id;
    // A guard: an archived project's members are not shown.
    if ((await store.find(id))?.archived) throw reject(`project '${id}' is archived`);
    return screen('Members', { project: id });
  }
  owner() { return coordinator('profile', { plugin: 'profile' }); }
  settings() { return screen('ProjectSettings'); }
  appeared(entry) { console.error(`projects: entry ${entry} appeared`); }
  action(name) {
    if (name === 'showOwner') return [{ op: 'route', route: 'owner' }];
    if (name === 'close') return [{ op: 'dismiss' }];
    return undefined;
  }
}

plugin.register(Projects);
plugin.register(Project);
plugin.run();
