/**
 * Run a scripted SSE server as its own process:
 *
 *   node --import tsx test/helpers/sse-server-main.ts '{"firstTokenDelayMs":200,"gapMs":20}'
 *
 * The argument is a {@link ServerConfig} as JSON (default `{}`). Prints `LISTENING <port>` on
 * stdout once it listens on 127.0.0.1. Stops on SIGTERM/SIGINT, and, when started by
 * `spawnScriptedServer`, when its parent goes away (`watchParent` of src/proc/child.ts), so it
 * never outlives the test process that started it.
 */

import { watchParent } from '../../src/proc/child';
import { startScriptedServer, type ServerConfig } from './sse-server';

let config: ServerConfig;
try {
  config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig;
} catch (err) {
  process.stderr.write(`sse-server-main: the argument must be a JSON ServerConfig, e.g. '{"gapMs":20}' (${String(err)})\n`);
  process.exit(2);
}

const server = await startScriptedServer(config);
let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
watchParent(stop);
process.stdout.write(`LISTENING ${server.port}\n`);
