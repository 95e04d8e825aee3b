/**
 * Test parent for test/proc-child.test.ts, standing in for the tslab kernel: starts
 * test/proc-child-entry.ts with `spawnChild`, prints `PARENT <childPid> <port>`, and turns SIGINT
 * into a printed `INTERRUPTED` (as tslab turns it into "interrupt the cell"). Runs until killed.
 */
import { fileURLToPath } from 'node:url';
import { spawnChild } from '../src/proc/child';

process.on('SIGINT', () => console.log('INTERRUPTED'));
const child = await spawnChild({
  entry: fileURLToPath(new URL('./proc-child-entry.ts', import.meta.url)),
  args: ['serve'],
  marker: 'PROC_READY',
});
console.log(`PARENT ${child.pid} ${child.payload}`);
setInterval(() => undefined, 1000);
