// The page's connection to the host: JSON-RPC (Protocol/README.md §15) over the studio's WebSocket, which relays
// each line to the host's control socket and back. Reconnects with backoff; every (re)connection starts fresh
// (the caller subscribes again and gets the full snapshot), so nothing is missed while disconnected.

export class HostConnection extends EventTarget {
  constructor(url) {
    super();
    this.url = url;
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.connected = false;
    this.retryMs = 250;
    this.hello = null;
  }

  start() { this.open(); }

  open() {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.addEventListener('message', (event) => this.receive(event.data));
    socket.addEventListener('close', () => this.closed(socket));
    // An error is always followed by close; the page shows the state, not the event.
    socket.addEventListener('error', () => {});
  }

  closed(socket) {
    if (socket !== this.socket) return;
    const was = this.connected;
    this.connected = false;
    for (const { reject } of this.pending.values()) reject(new Error('disconnected from the host'));
    this.pending.clear();
    this.dispatchEvent(new CustomEvent('state', { detail: { connected: false, was } }));
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 2000);
    setTimeout(() => this.open(), delay);
  }

  receive(text) {
    let message;
    try { message = JSON.parse(text); } catch { return; }
    if (message.method === 'studio/hello') {
      this.hello = message.params;
      if (message.params.connected) {
        this.connected = true;
        this.retryMs = 250;
        this.dispatchEvent(new CustomEvent('state', { detail: { connected: true, hello: message.params } }));
      }
      return;
    }
    if (message.method) {
      this.dispatchEvent(new CustomEvent('notification', { detail: { method: message.method, params: message.params, text } }));
      return;
    }
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(Object.assign(new Error(message.error.message), { rpc: message.error }));
    else waiter.resolve(message.result);
  }

  /** Sends a request; resolves with its result, rejects with the host's typed error (`error.rpc`). */
  call(method, params = {}) {
    if (!this.connected) return Promise.reject(new Error('disconnected from the host'));
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, method }));
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return promise;
  }
}

/**
 * The exact text of the plugin message inside a `trace/event` line: the host splices the message into the record
 * as it crossed the pipe (§15.1), and the record is the notification's last member, so the message runs from
 * `"message":` to the two closing braces.
 */
export function rawTraceMessage(line) {
  const marker = '"message":';
  const at = line.indexOf(marker);
  if (at < 0 || !line.endsWith('}}')) return null;
  return line.slice(at + marker.length, line.length - 2);
}
