// Types of testing.mjs: exhaustive navigation tests over a real host, for node:test. Checked with `tsc --noEmit`.
import type { JSONObject, Step } from './switchyard.js';

/** What an AppTest found that the test did not say, or said otherwise: at run time a node:assert AssertionError. */
export declare class AppTestFailure extends Error {
  /** AppTest throws these, with the diff or the list of what was not asserted in `message`. */
  constructor(message: string);
}

/** The tree as a test writes it (no ids, no revision), from a snapshot (`tree/get`). */
export declare function outline(snapshot: JSONObject): string;

/** A line diff of two texts: `-` only in `a`, `+` only in `b`, ` ` in both. */
export declare function diff(a: string, b: string): string;

/** Where an action applies: `'plugin.type'` (the first such instance, depth-first), an instance id, or the root. */
export type Target = string | number | undefined;

/** A real host for one test: every tree change and every notification a plugin received must be asserted. */
export declare class AppTest {
  /** Starts `switchyard run` for `manifest` and connects; resolves once the app has started. */
  static start(options: { manifest: string; exhaustive?: boolean; switchyard?: string; timeoutMs?: number }): Promise<AppTest>;
  /** Whether every change and notification must be asserted (the default), or only what the test names. */
  readonly exhaustive: boolean;
  /** Stops the host; with `check` (default true), what was left unasserted (exhaustive mode) fails the test. */
  close(options?: { check?: boolean }): Promise<void>;
  /** The host's last lines on stderr. */
  hostLog(): string;
  /** Opens a deep link (`defer`: it may wait, §13.5); resolves to the host's answer. Exhaustive: fails first if
   * something before it was not asserted. */
  open(url: string, options?: { defer?: boolean }): Promise<JSONObject>;
  /** Applies a chain of steps from `at` as one revision. */
  navigate(steps: Step[], at?: Target): Promise<{ revision: number; instance: number }>;
  /** The user dismisses `entry` of `at` (default: the top-most entry it shows), as a swipe or a dragged sheet. */
  dismiss(at: Target, entry?: number): Promise<{ revision: number; instance: number }>;
  /** The user does `action` on the screen of `entry` of `at` (default: its top-most entry), as a tap would. */
  action(at: Target, action: string, params?: JSONObject, entry?: number): Promise<{ revision: number; instance: number }>;
  /** The instance id `at` names in the current tree (undefined: the root); throws when no instance matches. */
  instance(at: Target): number | undefined;
  /** The tree after the next unasserted change is `expected` (an outline); waits for a change a plugin makes itself. */
  expectTree(expected: string): Promise<void>;
  /** The plugins received these notifications next (`'todos.todos dismissed todo (user)'`, ...). */
  expectReceived(...notifications: string[]): Promise<void>;
  /** Forgets the notifications not asserted so far. */
  skipReceived(): Promise<void>;
  /** The current tree's outline. */
  tree(): Promise<string>;
}
