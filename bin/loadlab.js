#!/usr/bin/env node
// The `loadlab` command. LoadLab is TypeScript run by tsx: register its loader, then run src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
if (typeof code === 'number') {
  process.exitCode = code;
  // A Ctrl-C while the finished command shuts down still ends it as an interrupt.
  process.on('SIGINT', () => process.exit(130));
  // Leave once output is flushed; a stray keep-alive handle must not keep a finished command alive.
  setTimeout(() => process.exit(code), 2000).unref();
}
