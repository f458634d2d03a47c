#!/usr/bin/env node
'use strict';
// A club whose offers are for members (spec §13.5): a guest's deep link to an offer is deferred by the guard until the
// member root is active, with the join sheet shown meanwhile.
const { Plugin, Coordinator, screen, routes, reject, untilRoot } = require('../../../Protocol/sdk/node');

class Club extends Coordinator {
  static typeName = 'club';
  static initial = 'guest';
  static routes = [
    routes.root('guest'),
    routes.root('member'),
    routes.modal('join'),
    routes.push('offer', { deepLink: 'offer/:id', params: [{ name: 'id', type: 'integer' }] }),
  ];

  guest() {
    this.isMember = false;
    return screen('Guest');
  }

  member() {
    this.isMember = true;
    return screen('Member');
  }

  join() { return screen('Join'); }

  offer({ id }) {
    if (!this.isMember) throw reject('members only', undefined, { deferUntil: untilRoot('member'), redirect: [{ op: 'route', route: 'join' }] });
    return screen('Offer', { id });
  }
}

const plugin = new Plugin('club', '1.0.0');
plugin.register(Club);
plugin.run();
