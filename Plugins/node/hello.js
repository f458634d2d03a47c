#!/usr/bin/env node
'use strict';
// The smallest Node plugin: one stack coordinator type with a root screen and a route with a param.
const path = require('path');
const { Plugin, Coordinator, screen, routes } = require(path.join(__dirname, '..', '..', 'Protocol', 'sdk', 'node', 'switchyard.js'));

const plugin = new Plugin('hello-node', '1.0.0');

class Hello extends Coordinator {
  static typeName = 'hello';
  static initial = 'greeting';
  static routes = [
    routes.root('greeting'),
    routes.push('details', { deepLink: 'details/:id', params: ['id'] }),
  ];
  greeting() { return screen('Greeting'); }
  details(params) { return screen('Details', { id: params.id }); }
}

plugin.register(Hello);
plugin.run();
