#!/usr/bin/env node
'use strict';
// A tab bar that starts with one of its three tabs (spec §12.7) and hears when a tab shows again (§12.9).
const { Plugin, Coordinator, screen, routes } = require('../../../Protocol/sdk/node');

class Bar extends Coordinator {
  static typeName = 'bar';
  static kind = 'tabs';
  static routes = [routes.tab('a'), routes.tab('b'), routes.tab('c')];
  initialTabs() { return ['b']; }
  a() { return screen('A'); }
  b() { return screen('B'); }
  c() { return screen('C'); }
  appeared(entry) { console.error(`bar: entry ${entry} appeared`); }
}

const plugin = new Plugin('bar', '1.0.0');
plugin.register(Bar);
plugin.run();
