// A typed plugin (CommonJS): async route methods backed by an asynchronous store, a guard, an action, a custom deep
// link resolver. `tsc --noEmit -p Protocol/sdk/node` checks it against switchyard.d.ts; the tests also compile it
// and run it through the host, so the types and the runtime cannot drift apart.
import { Coordinator, Plugin, RPCError, codes, reject, routes, screen, ui } from 'switchyard-sdk';
import type { Content, DeepLinkResolution, JSONObject, Link, Step } from 'switchyard-sdk';

interface Order { id: number; title: string }

/** Stands for a database or a web service: everything it does is asynchronous. */
const store = {
  orders: new Map<number, Order>([[1, { id: 1, title: 'Tea' }], [2, { id: 2, title: 'Cake' }]]),
  async find(id: number): Promise<Order | undefined> {
    await Promise.resolve();
    return this.orders.get(id);
  },
};

class Orders extends Coordinator<{ customer?: string }> {
  static override typeName = 'orders';
  static override initial = 'list';
  static override customDeepLinks = true;
  static override routes = [
    // The list's rows open an order: a tap sends `open` with the order's id, and `action` decides (§12.6, §21).
    routes.root('list', { actions: [{ name: 'open', params: [{ name: 'id', type: 'integer' }] }] }),
    routes.push('order', { params: [{ name: 'id', type: 'integer' }], actions: ['close'] }),
    routes.modal('help', { presentation: { detents: ['medium'] } }),
  ];

  /** `order/7` opens order 7; anything else is not a link into this type. */
  static override async handleDeepLink(segments: string[]): Promise<DeepLinkResolution> {
    const id = Number(segments[1]);
    if (segments[0] !== 'order' || !Number.isInteger(id)) throw new RPCError(codes.deepLinkInvalid, 'not an order link');
    return { route: 'order', params: { id }, consumed: 2 };
  }

  list(): Content {
    const rows = [...store.orders.values()].map((order) =>
      ui.row(order.title, { detail: `#${order.id}`, action: ui.action('open', { params: { id: order.id } }) }));
    return ui.screen('OrderList', {
      title: 'Orders', props: { customer: this.params?.customer ?? 'anyone' }, content: [ui.list(...rows)],
    });
  }

  async order({ id }: { id: number }, link?: Link): Promise<Content> {
    const order = await store.find(id);
    if (!order) throw reject(`there is no order ${id}`); // a guard: rejectedByGuard, nothing changes
    return screen('Order', { id, title: order.title, via: link?.url ?? null });
  }

  help(): Content { return screen('Help'); }

  override async action(name: string, params?: JSONObject): Promise<Step[] | undefined> {
    if (name === 'open') return [{ op: 'route', route: 'order', params: { id: params?.id ?? null } }];
    return name === 'close' ? [{ op: 'popLast' }] : undefined;
  }
}

const plugin = new Plugin('orders', '0.1.0');
plugin.register(Orders);
plugin.run();
