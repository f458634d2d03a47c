// Types of the Switchyard plugin SDK for Node.js (switchyard.js, CommonJS, and switchyard.mjs, its ES module twin).
// Checked with `tsc --noEmit -p Protocol/sdk/node` (strict) against examples/typed-plugin.ts.

/** Any JSON value. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };
/** A JSON object: a route's or a coordinator's params, a result. */
export type JSONObject = { [key: string]: JSONValue };
/** What plugin code may return where the SDK asks it something: the value, or a promise of it (an async method). */
export type MaybePromise<T> = T | PromiseLike<T>;

/** A param type the host checks and converts (§5). */
export type ParamType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'any';
/** A declared param: `{name, type?, required?}`, or only its name for a required string. */
export type ParamDeclaration = string | { name: string; type?: ParamType; required?: boolean };
/** An action a screen emits (§12.6): its name, or `{name, params?}`. */
export type ActionDeclaration = string | { name: string; params?: ParamDeclaration[] };
/** How an entry is shown (§12.8). */
export type Transition = 'root' | 'push' | 'modal' | 'fullScreen' | 'tab' | 'child';
/** Presentation options of a route's entries, for the UI shell (§12.8). */
export interface Presentation { detents?: string[]; interactiveDismissDisabled?: boolean; customTransition?: string }

/** The options of every route maker. */
export interface RouteOptions {
  /** A pattern relative to the coordinator: `todo/:id`, `files/**`, `""` (§13). */
  deepLink?: string;
  /** Declared params (absent: any params are accepted). */
  params?: ParamDeclaration[];
  /** The coordinator type the route opens (absent: the route shows a screen). */
  target?: string;
  /** The target's plugin when it is another plugin's. */
  plugin?: string;
  /** The params the route creates its target with, declared like `params` (§5, §19). */
  targetParams?: ParamDeclaration[];
  /** What the route's screen emits (§12.6). */
  actions?: ActionDeclaration[];
  /** Other transitions a `route` step may pick (§12.8). */
  transitions?: Array<'push' | 'modal' | 'fullScreen'>;
  /** How the route's entries are shown unless a step gives its own (§12.8). */
  presentation?: Presentation;
  /** On a tab: what the tab bar shows (§21). */
  tabItem?: TabItem;
}

/** What a tab bar shows for a tab (§21): its title, a symbol of the documented set, the badge it starts with. */
export interface TabItem { title: string; symbol?: string; badge?: string }

/** A route of a coordinator type's table (§5), as a route maker writes it. */
export interface RouteDeclaration {
  /** What steps and the route's method name it by. */
  name: string;
  /** How its entries are shown. */
  transition: Transition;
  /** The pattern that takes it, relative to the coordinator (§13). */
  deepLink?: string;
  /** Its params, normalized to objects (absent: any). */
  params?: Array<{ name: string; type?: ParamType; required?: boolean }>;
  /** The coordinator type it opens (absent: it shows a screen). */
  target?: { type: string; plugin?: string };
  /** The params it creates its target with (§5, §19). */
  targetParams?: Array<{ name: string; type?: ParamType; required?: boolean }>;
  /** What its screen emits (§12.6), normalized to objects. */
  actions?: Array<{ name: string; params?: Array<{ name: string; type?: ParamType; required?: boolean }> }>;
  /** Other transitions a `route` step may pick (§12.8). */
  transitions?: string[];
  /** How its entries are shown unless a step gives its own (§12.8). */
  presentation?: Presentation;
  /** On a tab: what the tab bar shows (§21). */
  tabItem?: TabItem;
}

/** Route declarations, one maker per transition: `routes.push('todo', { deepLink: 'todo/:id', params: ['id'] })`. */
export declare const routes: {
  /** A root route of a stack coordinator: what `initial` names, or what a `setRoot` step picks. */
  readonly root: (name: string, options?: RouteOptions) => RouteDeclaration;
  /** A route pushed onto a stack coordinator's stack. */
  readonly push: (name: string, options?: RouteOptions) => RouteDeclaration;
  /** A route presented as a sheet over a stack. */
  readonly modal: (name: string, options?: RouteOptions) => RouteDeclaration;
  /** A route presented full screen over a stack. */
  readonly fullScreen: (name: string, options?: RouteOptions) => RouteDeclaration;
  /** A tab of a tabs coordinator, in display order. */
  readonly tab: (name: string, options?: RouteOptions) => RouteDeclaration;
  /** The one child of a wrapper coordinator. */
  readonly child: (name: string, options?: RouteOptions) => RouteDeclaration;
};

/** A screen to show: its name (what the UI shell maps to a view) and props; its title and content as data (§21). */
export interface ScreenContent {
  /** The screen: what the UI shell looks up by `name`, with `props`; `title` and `content` when drawn from data. */
  screen: { name: string; props?: { [key: string]: unknown }; title?: string; content?: UIElement[] };
}
/** A coordinator to open: its type, its plugin when another plugin's, and the params it is created with. */
export interface CoordinatorContent { coordinator: { type: string; plugin?: string; params?: unknown } }
/** What a route shows. */
export type Content = ScreenContent | CoordinatorContent;

/** Content showing the screen `name` with `props`. */
export declare function screen(name: string, props?: { [key: string]: unknown }): ScreenContent;
/** What a tap sends (§21): a declared action, its fixed params, and the ids of the inputs whose values go with it. */
export interface UIAction { name: string; params?: { [key: string]: JSONValue }; inputs?: string[] }
/** A row of a list section (§21). */
export interface UIRow {
  /** The row's text; `subtitle` goes under it, `detail` at the trailing edge, `badge` and `symbol` beside it, and
   * `disclosure` shows a chevron (default: when the row has an action). */
  title: string; subtitle?: string; detail?: string; badge?: string; symbol?: string; disclosure?: boolean;
  /** What a tap on the row sends. */
  action?: UIAction;
}
/** A section of a list: rows under an optional header (§21). */
export interface UISection { header?: string; footer?: string; rows: UIRow[] }
/** An option of a picker. */
export interface UIOption { value: string; title: string }
/** One element of a screen's content (§21). */
export type UIElement =
  | { type: 'text'; text: string; style?: 'title' | 'headline' | 'body' | 'caption' }
  | { type: 'list'; sections: UISection[] }
  | { type: 'button'; title: string; action: UIAction; style?: 'primary' | 'destructive' | 'plain'; symbol?: string }
  | { type: 'textField' | 'secureField'; id: string; label?: string; placeholder?: string; value?: string }
  | { type: 'toggle'; id: string; label: string; value?: boolean }
  | { type: 'picker'; id: string; label: string; options: UIOption[]; value?: string }
  | { type: 'divider' } | { type: 'spacer' } | { type: 'symbol'; name: string };

/** Screens as data (§21): plain functions that build a screen's title and content. */
export declare const ui: {
  /** A screen drawn from data: its name, the navigation bar's title, its content and props. */
  readonly screen: (name: string, options?: { title?: string; content?: UIElement[]; props?: { [key: string]: unknown } }) => ScreenContent;
  /** What a tap sends: a declared action, its fixed params, and the ids of the inputs whose values go with it. */
  readonly action: (name: string, options?: { params?: { [key: string]: JSONValue }; inputs?: string[] }) => UIAction;
  /** Text; style title, headline, body (default) or caption. */
  readonly text: (value: string, options?: { style?: 'title' | 'headline' | 'body' | 'caption' }) => UIElement;
  /** A grouped list of sections; rows outside a section make one of their own. */
  readonly list: (...items: Array<UIRow | UISection>) => UIElement;
  /** A section of a list. */
  readonly section: (rows: UIRow[], options?: { header?: string; footer?: string }) => UISection;
  /** A row; with an action it shows a chevron unless `disclosure: false`. */
  readonly row: (title: string, options?: Omit<UIRow, 'title'>) => UIRow;
  /** A button sending an action; style primary, destructive or plain (default). */
  readonly button: (title: string, action: UIAction, options?: { style?: 'primary' | 'destructive' | 'plain'; symbol?: string }) => UIElement;
  /** A one-line text input; sends its text. */
  readonly textField: (id: string, options?: { label?: string; placeholder?: string; value?: string }) => UIElement;
  /** A password input; sends its text. */
  readonly secureField: (id: string, options?: { label?: string; placeholder?: string }) => UIElement;
  /** A switch; sends true or false. */
  readonly toggle: (id: string, label: string, options?: { value?: boolean }) => UIElement;
  /** A choice among options; sends the chosen value. */
  readonly picker: (id: string, label: string, options: Array<string | [string, string] | UIOption>, settings?: { value?: string }) => UIElement;
  /** A thin line. */
  readonly divider: () => UIElement;
  /** Flexible space. */
  readonly spacer: () => UIElement;
  /** A symbol of the documented set. */
  readonly symbol: (name: string) => UIElement;
  /** What the tab bar shows for a tab route. */
  readonly tabItem: (title: string, options?: { symbol?: string; badge?: string }) => TabItem;
};

/** Content opening a coordinator of `type` (of `plugin` when another plugin's), created with `params`. */
export declare function coordinator(type: string, options?: { plugin?: string; params?: unknown }): CoordinatorContent;

/** One navigation step (§12.1), e.g. `{ op: 'route', route: 'todo', params: { id: '42' } }`. */
export interface Step {
  /** The operation: route, setRoot, pop, focusFirst, selectTab, dismiss, child, parent… (§12.1 lists them). */
  op: string;
  /** The route a route, setRoot, hasRoot, focusFirst, forcePresent or refresh step names. */
  route?: string;
  /** The tab a selectTab or setBadge step names. */
  tab?: string;
  /** The params of the route it opens. */
  params?: unknown;
  /** The entry a pop or refresh step names. */
  entry?: number;
  /** popTo: the last entry kept, counted from the root (-1: only the root). */
  index?: number;
  /** How many entries a popCount step removes. */
  count?: number;
  /** setRoot: keep the entries above the root instead of clearing them. */
  keepStack?: boolean;
  /** setTabs: the tab routes, in display order. */
  tabs?: string[];
  /** setBadge: the tab's badge; absent or null clears it. */
  badge?: string | number | null;
  /** route or forcePresent: one of the transitions the route allows. */
  transition?: string;
  /** route: this entry's presentation options, instead of the route's. */
  presentation?: Presentation;
}

/** The deep link that takes a route (§13.4), when one does. */
export interface Link { url: string; segments: string[]; index: number; query: { [key: string]: string } }
/** What a `navigate` answers: the tree's revision afterwards and the instance the last step landed on. */
export interface NavigateResult { revision: number; instance: number }
/** What Coordinator.handleDeepLink answers (§8, `coordinator/deepLink`). */
export interface DeepLinkResolution { route: string; params?: unknown; consumed: number }
/** An error answer's `error` member (§7). */
export interface ErrorBody { code: number; message: string; data?: unknown }
/** The callback form of a request's answer. */
export type Done<T = unknown> = (result: T | undefined, error: ErrorBody | undefined) => void;

/** Every JSON-RPC and Switchyard error code of the spec's table (§7), by the spec's name. */
export declare const codes: {
  // Compare `error.code` with these names rather than with numbers: the name says what happened.
  readonly parseError: -32700; readonly invalidRequest: -32600; readonly methodNotFound: -32601;
  readonly invalidParams: -32602; readonly internalError: -32603; readonly timeout: -32000;
  readonly notInitialized: -32001; readonly unsupportedProtocolVersion: -32002; readonly pluginUnavailable: -32003;
  readonly limitExceeded: -32004; readonly shuttingDown: -32005; readonly invalidAnswer: -32006;
  readonly unauthorized: -32007; readonly routeNotFound: -32010; readonly notAllowed: -32011; readonly notOwner: -32012;
  readonly rejectedByGuard: -32013; readonly deepLinkInvalid: -32014; readonly instanceNotFound: -32015;
  readonly conflict: -32016; readonly compositionError: -32017;
};

/** A typed error: throw it (or reject with it) to answer with `code`, `message` and `data` (§7). */
export declare class RPCError extends Error {
  /** An error answering with `code` (one of `codes`), `message` for people, and `data` for programs. */
  constructor(code: number, message: string, data?: unknown);
  /** The JSON-RPC or Switchyard code (§7). */
  code: number;
  /** The context a program needs: the plugin, route, field, traceback… */
  data: unknown;
  /** The `error` member of an answer. */
  toJSON(): ErrorBody;
}

/** What a deferred deep link waits for (§13.5): exactly one of `root` or `tab`, and the coordinator it is about. */
export type DeferCondition = ({ root: string; tab?: never } | { tab: string; root?: never }) & {
  instance?: number; plugin?: string; type?: string;
};

/** Where a deferral's condition looks: an instance, else any instance of a type (plugin: this one by default). */
export interface ConditionTarget { instance?: number; plugin?: string; type?: string }

/**
 * A guard's refusal, to throw from a route method: -32013 rejectedByGuard, the tree stays as it was. With
 * `options.deferUntil` a "not yet": a deep link opened with `defer` waits until the condition holds, and
 * `options.redirect` is what to show meanwhile (§13.5).
 */
export declare function reject(
  reason: string, data?: unknown, options?: { deferUntil?: DeferCondition; redirect?: Step[] },
): RPCError;

/** A deferral's condition: `route` is the active root (of the coordinator `where` names, else the refused one). */
export declare function untilRoot(route: string, where?: ConditionTarget): DeferCondition;

/** A deferral's condition: the tab `route` is shown (of the coordinator `where` names, else the refused one). */
export declare function untilTab(route: string, where?: ConditionTarget): DeferCondition;

/**
 * What a request the plugin sent will answer: a Promise of the result, rejected with an RPCError when the host
 * refuses it. A refusal nothing awaits and no `done` receives is written to stderr (the host log).
 */
export declare class Reply<T> extends Promise<T> {
  /** The method of the request, to tell replies apart in a log. */
  readonly method: string;
  /** The request's id on the wire, as it appears in the protocol trace. */
  readonly id: string;
}

/** A handler of a host request: params in, the result (or a promise of it) out. */
export type RequestHandler = (params: JSONObject) => MaybePromise<unknown>;
/** A handler of a host notification. */
export type NotificationHandler = (params: JSONObject) => MaybePromise<void>;

/** The protocol endpoint of a plugin process (Plugin's base class). */
export declare class Connection {
  /** Request handlers by method. */
  readonly handlers: Map<string, RequestHandler>;
  /** Notification handlers by method. */
  readonly notificationHandlers: Map<string, NotificationHandler>;
  /** Handles the host request `method`. */
  request(method: string, handler: RequestHandler): void;
  /** Handles the host notification `method`. */
  notification(method: string, handler: NotificationHandler): void;
  /** Writes one message now (`jsonrpc` is added). */
  send(message: object): void;
  /** Sends a request to the host now. */
  call<T = unknown>(method: string, params?: object, done?: Done<T>): Reply<T>;
  /** Like call(), but while a handler of a host request runs, sent right after its answer. */
  deferCall<T = unknown>(method: string, params?: object, done?: Done<T>): Reply<T>;
  /** A `log` notification (§8). */
  log(level: 'trace' | 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical', message: string): void;
  /** Serves the host on stdin and stdout until stdin ends or the host says `exit`, then exits the process. */
  run(): void;
}

/** The constructor and static declaration of a coordinator type, as Plugin.register takes it. */
export interface CoordinatorType {
  /** The SDK creates an instance for each `coordinator/create` of the type. */
  new (plugin: Plugin, instance: number, params: any): Coordinator;
  /** The type's name, unique in the plugin. */
  typeName: string;
  /** 'stack' (default), 'tabs' or 'wrapper'. */
  kind?: 'stack' | 'tabs' | 'wrapper';
  /** The route table. */
  routes: RouteDeclaration[];
  /** For a stack: the root route shown at creation. */
  initial?: string;
  /** True when handleDeepLink resolves the links into this type. */
  customDeepLinks?: boolean;
  /** For customDeepLinks types: the route the remaining segments take. */
  handleDeepLink(segments: string[], query: { [key: string]: string }): MaybePromise<DeepLinkResolution>;
  /** The type's entry in the `initialize` result (§5). */
  declaration(): JSONObject;
  /** What in the declaration would fail only when a route is taken, one line each. */
  declarationProblems(): string[];
}

/**
 * Base class of a coordinator type. Set static `typeName`, `kind`, `routes` and, for a stack, `initial`; define a
 * method per route, `(params, link) => Content` or an async one; throw reject(...) to refuse (a guard).
 */
export declare class Coordinator<Params = any> {
  /** The type's name, unique in the plugin. */
  static typeName: string;
  /** 'stack' (default), 'tabs' or 'wrapper'. */
  static kind?: 'stack' | 'tabs' | 'wrapper';
  /** The route table. */
  static routes: RouteDeclaration[];
  /** For a stack: the root route shown at creation. */
  static initial?: string;
  /** True when handleDeepLink resolves the links into this type. */
  static customDeepLinks?: boolean;
  /** The params an instance is created with (`this.params`): the contract with whoever opens the type (§5, §19). */
  static creationParams?: ParamDeclaration[];
  /** For customDeepLinks types: the route the remaining segments take. */
  static handleDeepLink(segments: string[], query: { [key: string]: string }): MaybePromise<DeepLinkResolution>;
  /** The type's entry in the `initialize` result (§5). */
  static declaration(): JSONObject;
  /** What in the declaration would fail only when a route is taken, one line each. */
  static declarationProblems(): string[];

  /** Called by the SDK for each `coordinator/create`; a subclass that overrides it passes all three on. */
  constructor(plugin: Plugin, instance: number, params: Params | undefined);
  /** The plugin serving this instance: its connection to the host. */
  readonly plugin: Plugin;
  /** The host's id of this instance. */
  readonly instance: number;
  /** What the route that opened it gave. */
  params: Params | undefined;
  /** Any JSON the host keeps for the instance and hands back after a restart (§16). */
  state: unknown;

  /** [route, params] of the root to show at creation. */
  initialRoot(): MaybePromise<[string | undefined, unknown]>;
  /** For a tabs coordinator: the tabs shown at creation (undefined: all). */
  initialTabs(): MaybePromise<string[] | undefined>;
  /** A new version takes this instance over (§20.1): `state` as `fromVersion` wrote it, in this version's shape. */
  migrate(fromVersion: string, state: unknown): MaybePromise<unknown>;
  /** The instance left the tree. */
  didDestroy(): MaybePromise<void>;
  /** An entry of this instance left the tree. */
  dismissed(route: string, entry: number, reason: 'user' | 'navigation'): MaybePromise<void>;
  /** A tab of this tabs instance was selected. */
  tabSelected(tab: string, isRepeat: boolean): MaybePromise<void>;
  /** An entry became visible again (§12.9); overriding it declares `appearance`. */
  appeared(entry: number): MaybePromise<void>;
  /** A screen of this instance emitted a declared action (§12.6): the steps to take, or nothing. */
  action(name: string, params: JSONObject | undefined, context: { route: string; entry: number }): MaybePromise<Step[] | undefined | void>;
  /** Applies `steps` from this instance as one chain, after the answer being written. */
  navigate(steps: Step[], done?: Done<NavigateResult>): Reply<NavigateResult>;
  /** A read-only question about this instance (§12.4); resolves to its answer. */
  query<T = unknown>(query: string, route?: string, done?: Done<T>, extra?: object): Reply<T>;
  /** What route `name` shows; override to dispatch routes yourself. */
  contentFor(name: string, params: unknown, link?: Link): MaybePromise<Content>;
}

/** A plugin process: register coordinator types, then run(). */
export declare class Plugin extends Connection {
  /** A plugin that reports `name` and `version` in its `initialize` result (the manifest's name for it arrives
   * with `initialize`: `pluginName`). */
  constructor(name: string, version: string);
  /** The name the plugin gave itself. */
  readonly name: string;
  /** The plugin's version: what `status` shows and what an upgrade's contract diff names. */
  readonly version: string;
  /** The route table sent in the `initialize` result. */
  readonly coordinators: JSONObject[];
  /** The registered types by name. */
  readonly types: Map<string, CoordinatorType>;
  /** The live instances by id. */
  readonly instances: Map<number, Coordinator>;
  /** The manifest's name for the plugin, once `initialize` came. */
  readonly pluginName: string | undefined;
  /** Registers a Coordinator subclass and serves the coordinator/* methods for it. */
  register<T extends CoordinatorType>(type: T): T;
}

/** The protocol versions this SDK speaks. */
export declare const PROTOCOL_VERSIONS: readonly number[];
/** The package's version (major = the newest protocol version spoken). */
export declare const version: string;
