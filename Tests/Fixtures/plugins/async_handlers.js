#!/usr/bin/env node
'use strict';
// A plugin whose route methods are async, for the tests of what the SDK does with them through the host:
// - `item/:id` awaits (a timer stands for a database) before it answers; its guard refuses an unknown id after the
//   await, so the refusal is a rejected promise;
// - `checkout` answers at once and starts a task that awaits a `navigate` of its own (sent after the answer) and logs
//   the revision it produced;
// - `broken` rejects with a TypeError after an await: internalError with the stack in `error.data`;
// - the `vault` type resolves its deep links itself, asynchronously (`customDeepLinks`).
const { Plugin, Coordinator, screen, coordinator, routes, reject } = require('../../../Protocol/sdk/node');

const prices = new Map([[1, 'tea'], [2, 'cake']]);
const later = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class Shop extends Coordinator {
  static typeName = 'shop';
  static initial = 'home';
  static routes = [
    routes.root('home'),
    routes.push('item', { deepLink: 'item/:id', params: [{ name: 'id', type: 'integer' }] }),
    routes.push('checkout', { deepLink: 'checkout' }),
    routes.push('broken', { deepLink: 'broken' }),
    routes.push('vault', { deepLink: 'vault', target: 'vault' }),
  ];

  async home() {
    await later(0);
    return screen('Shop');
  }

  async item({ id }) {
    await later(10);
    if (!prices.has(id)) throw reject(`there is no item ${id}`);
    return screen('Item', { name: prices.get(id) });
  }

  checkout() {
    this.leave();
    return screen('Checkout');
  }

  async leave() {
    const { revision } = await this.navigate([{ op: 'popLast' }]);
    console.error(`shop: left the checkout, revision ${revision}`);
  }

  async broken() {
    await later(0);
    return screen('Broken', { name: prices.get(99).toUpperCase() });
  }

  vault() { return coordinator('vault'); }
}

class Vault extends Coordinator {
  static typeName = 'vault';
  static initial = 'door';
  static customDeepLinks = true;
  static routes = [routes.root('door'), routes.push('box', { params: ['number'] })];

  static async handleDeepLink(segments) {
    await later(0);
    return { route: 'box', params: { number: segments[0] }, consumed: 1 };
  }

  door() { return screen('Door'); }
  async box({ number }) { return screen('Box', { number }); }
}

const plugin = new Plugin('shop', '1.0.0');
plugin.register(Shop);
plugin.register(Vault);
plugin.run();
