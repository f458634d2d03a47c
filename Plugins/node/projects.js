#!/usr/bin/env node
'use strict';
// The projects tab (Node.js): a list, a project pushed as its own coordinator, its members pushed inside it.
const { Plugin, Coordinator, screen, coordinator, reject, routes } = require('../../Protocol/sdk/node');

const plugin = new Plugin('projects', '1.0.0');
const projects = { p1: 'Apollo', p2: 'Gemini', p7: 'Voyager' };
const archived = new Set(['p2']);

class Projects extends Coordinator {
  static typeName = 'projects';
  static initial = 'list';
  static routes = [
    routes.root('list'),
    routes.push('project', { deepLink: ':id', params: ['id'], target: 'project', targetParams: ['id'] }),
  ];
  list() { return screen('ProjectList', { count: Object.keys(projects).length }); }
  project(params) {
    if (!(params.id in projects)) throw reject(`there is no project '${params.id}'`);
    return coordinator('project', { params: { id: params.id } });
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
  overview() {
    const id = (this.params || {}).id;
    return screen('Project', { id, name: projects[id] || id });
  }
  members() {
    const id = (this.params || {}).id;
    // A guard: an archived project's members are not shown.
    if (archived.has(id)) throw reject(`project '${id}' is archived`);
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
