/**
 * Test child for test/proc-child.test.ts: `node --import tsx test/proc-child-entry.ts <mode>`.
 * Modes: `serve` (listen on 127.0.0.1:0, print `PROC_READY <port>`), `ignore-term` (the same,
 * but SIGTERM is ignored), `fail` (print a reason and exit 3 before the ready line), `silent`
 * (never ready). Exits when its parent goes away (`watchParent`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { watchParent } from '../src/proc/child';

const mode = process.argv[2] ?? 'serve';
watchParent(() => process.exit(0));
if (mode === 'fail') {
  console.error('proc-child-entry: failing on purpose');
  process.exit(3);
}
if (mode === 'ignore-term') process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
else process.on('SIGTERM', () => process.exit(0));
const server = createServer((_req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => {
  console.log('proc-child-entry: listening');
  if (mode !== 'silent') console.log(`PROC_READY ${(server.address() as AddressInfo).port}`);
});
