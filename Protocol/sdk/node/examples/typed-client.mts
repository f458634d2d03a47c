// A typed control client (ES module): sign in, open a deep link, tell a refusal by its code.
import { ControlClient, ControlError, step } from 'switchyard-sdk/client';
import { codes } from 'switchyard-sdk';

/** Signs alice in on the app `app` and opens todo 42; resolves to the revision the link produced, or undefined. */
export async function openTodo(app: string): Promise<number | undefined> {
  const host = await ControlClient.connect({ app, timeoutMs: 5_000 });
  try {
    await host.subscribe({ snapshots: false });
    await host.navigate([step('setRoot', 'authenticated', { params: { user: 'alice' } })]);
    const { revision } = await host.open('switchyard://todos/todo/42');
    const tree = await host.tree();
    return tree.revision === revision ? revision : undefined;
  } catch (error) {
    if (error instanceof ControlError && error.kind === 'response' && error.code === codes.deepLinkInvalid) return undefined;
    throw error;
  } finally {
    host.close();
  }
}
