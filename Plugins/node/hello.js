#!/usr/bin/env node
'use strict';
// The smallest Node plugin: one stack coordinator type with a root screen and a route with a param.
// The bundled plugins load the SDK from this checkout; a plugin of your own requires the installed package
// (`npm install ./Protocol/sdk/node`, then `require('switchyard-sdk')`).
const { Plugin, Coordinator, screen, routes } = require('../../Protocol/sdk/node');

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
