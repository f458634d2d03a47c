// Peer host: Node's child_process, the way a Node user would host a line-delimited JSON-RPC child.
//   node host.js COUNT PIPELINED WINDOW -- CHILD COMMAND...
// Prints {"samples":[ns,...],"pipelinedNs":N}: COUNT sequential `$/ping` round trips, then PIPELINED requests with
// WINDOW in flight (WINDOW workers, each awaiting its answer before sending the next), as switchyard-bench's burst does.
'use strict';
const { spawn } = require('node:child_process');
const readline = require('node:readline');

const [count, pipelined, window] = process.argv.slice(2, 5).map(Number);
const command = process.argv.slice(process.argv.indexOf('--') + 1);
const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });

const pending = new Map();
let nextId = 1;
readline.createInterface({ input: child.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  const resolve = pending.get(message.id);
  pending.delete(message.id);
  resolve(message.result);
});

function request(method, params) {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
}

async function main() {
  const samples = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await request('$/ping', {});
    samples.push(Number(process.hrtime.bigint() - start));
  }
  let unsent = pipelined;
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (unsent > 0) {
      unsent--;
      await request('$/ping', {});
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
  const pipelinedNs = Number(process.hrtime.bigint() - start);
  child.stdin.end();
  process.stdout.write(JSON.stringify({ samples, pipelinedNs }) + '\n');
}
main();
