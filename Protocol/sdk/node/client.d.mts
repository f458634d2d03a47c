// Types of client.mjs, the control client (Protocol/README.md §15). Checked with `tsc --noEmit -p Protocol/sdk/node`.
import type { DeferCondition, ErrorBody, JSONObject, Step } from './switchyard.js';

export type { Step };

/** The name of every code of §7 (`-32014: 'deepLinkInvalid'`). */
export declare const errorNames: Readonly<{ [code: number]: string }>;

/** Why a call did not produce a result: `kind` says which failure, `code`/`codeName`/`data` come with 'response'. */
export declare class ControlError extends Error {
  /** The client makes these; a program only reads them. */
  constructor(kind: ControlError['kind'], message: string, details?: { code?: number; data?: unknown });
  /** 'response': the host answered with an error; 'connection': the socket failed or closed; 'protocolViolation':
   * the host sent something that is not a valid message; 'timeout': no answer within the client's `timeoutMs`. */
  readonly kind: 'response' | 'connection' | 'protocolViolation' | 'timeout';
  /** With 'response': the error's code (§7), to compare with `errorNames` or the SDK's `codes`. */
  readonly code: number | undefined;
  /** With 'response': the spec's name of the code (`'deepLinkInvalid'`), for messages and switch statements. */
  readonly codeName: string | undefined;
  /** With 'response': the error's context (the segment, field, plugin…), as the host sent it. */
  readonly data: unknown;
  /** The host's own sentence, without the code prefix. */
  readonly reason: string;
}

/** A notification from the host: `method` (e.g. tree/changed) and its params. */
export interface Notification { method: string; params: JSONObject }
/** A tree snapshot (Protocol/schema/tree.json): `{revision, root, instances}`. */
export interface TreeSnapshot { revision: number; root?: number; instances: JSONObject[]; [key: string]: unknown }

/** Where `switchyard run` listens for `app` when not told otherwise. */
export declare function defaultSocketPath(app?: string): string;
/** One navigation step (§12.1). */
export declare function step(op: string, route?: string, options?: Omit<Step, 'op' | 'route'>): Step;
/** The tree after a tree/changed notification's params (its snapshot, or `tree` with the patch applied). */
export declare function applyTreeChange(tree: TreeSnapshot | undefined, change: JSONObject): TreeSnapshot;
/** JSON Patch (RFC 6902): `document` with the operations applied, `document` itself unchanged. */
export declare function applyPatch<T>(document: T, patch: JSONObject[]): T;

/** A deep link waiting in the host (§13.5). */
export interface DeferredDeepLink { id: number; url: string; until: DeferCondition; deferMs: number }

/** A connection to a host's control socket; any number of calls in flight. */
export declare class ControlClient {
  /** Connects to the host at `path` (default: defaultSocketPath(app)); resolves once connected. */
  static connect(options?: { path?: string; app?: string; timeoutMs?: number | null; checkOwner?: boolean }): Promise<ControlClient>;
  /** The socket this client is connected to: what its errors name. */
  readonly path: string;
  /** How long a call waits for its answer before it fails with kind 'timeout' (null: forever). */
  readonly timeoutMs: number | null;
  /** Applies a chain of steps atomically; `instance` defaults to the root. */
  navigate(steps: Step[], instance?: number): Promise<{ revision: number; instance: number }>;
  /** Applies a deep link (validated first, then one atomic chain); with `defer`, one that cannot be applied yet waits. */
  open(url: string, options?: { defer?: boolean; deferMs?: number }): Promise<{
    revision: number; instance: number; deferred?: DeferredDeepLink; replaced?: DeferredDeepLink; redirectError?: ErrorBody;
  }>;
  /** Drops the deep link waiting (the one with `id`, or any); resolves to it, or null. */
  cancelDeepLink(id?: number): Promise<DeferredDeepLink | null>;
  /** The deep link waiting now, or null. */
  pendingDeepLink(): Promise<DeferredDeepLink | null>;
  /** The dry run of open(): changes nothing. */
  validate(url: string): Promise<{ valid: boolean; steps?: Step[]; error?: ErrorBody }>;
  /** The current snapshot. */
  tree(): Promise<TreeSnapshot>;
  /** The tree as text, json, dot or mermaid. */
  render(format?: 'text' | 'json' | 'dot' | 'mermaid'): Promise<{ revision: number; text: string }>;
  /** A read-only question (§12.4); resolves to its answer. */
  query<T = unknown>(query: string, options?: { instance?: number; route?: string; params?: JSONObject }): Promise<T>;
  /** Asks for tree/changed, plugin/changed and coordinator/destroyed notifications; resolves to the current snapshot. */
  subscribe(options?: { snapshots?: boolean; deltas?: boolean }): Promise<TreeSnapshot>;
  /** The tree the next tree/changed leads to. */
  nextTree(options?: { timeoutMs?: number | null }): Promise<TreeSnapshot>;
  /** Stops the notifications. */
  unsubscribe(): Promise<JSONObject>;
  /** Reports that the user dismissed `entry` of `instance` in the UI. */
  dismissed(instance: number, entry: number): Promise<{ revision: number; instance: number }>;
  /** Each plugin's state. */
  status(): Promise<JSONObject>;
  /** Starts a failed or stopped plugin again. */
  startPlugin(plugin: string): Promise<JSONObject>;
  /** Stops the host and its plugins. */
  shutdown(): Promise<JSONObject>;
  /** `$/ping`: resolves once the host's loop answered, to tell a live host from a stuck one. */
  ping(): Promise<JSONObject>;
  /** The next notification (of `method`, skipping others, when given). */
  nextNotification(method?: string, options?: { timeoutMs?: number | null }): Promise<Notification>;
  /** Every notification, as they come, until the connection ends. */
  notifications(): AsyncGenerator<Notification, void, undefined>;
  /** Sends a request and resolves to its result. */
  call<T = unknown>(method: string, params?: object): Promise<T>;
  /** Ends the connection. */
  close(): void;
}
