/**
 * TCP port checks for launching a server: is something already there, wait until a port is
 * free again, pick a free one. Two probes, because they catch different things: a connect
 * finds a server that answers, a bind finds a port held by a socket that does not accept
 * (or bound on another address of the same machine, e.g. `0.0.0.0`).
 */
import { connect, createServer } from 'node:net';

/** What `checkPort` found. */
export interface PortCheck {
  inUse: boolean;
  /** `listening`: a connect succeeded; `bound`: a bind failed with EADDRINUSE. */
  how?: 'listening' | 'bound';
}

/** True when a TCP connect to host:port succeeds within `timeoutMs` (default 500). */
export function isListening(port: number, host: string, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Resolves true when `port` can be bound on `host` right now (it is closed again at once).
 * Rejects for errors other than EADDRINUSE, with the fix: EACCES (port < 1024 needs root),
 * EADDRNOTAVAIL (`host` is not an address of this machine).
 */
export function canBind(port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') resolve(false);
      else if (err.code === 'EACCES')
        reject(
          new Error(`no permission to listen on port ${port} (ports below 1024 need root); choose a port ≥ 1024, e.g. 8000`),
        );
      else if (err.code === 'EADDRNOTAVAIL')
        reject(
          new Error(`host ${host} is not an address of this machine; use 127.0.0.1 (local only) or 0.0.0.0 (all interfaces)`),
        );
      else reject(err);
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Whether host:port is taken, by either probe. */
export async function checkPort(port: number, host: string): Promise<PortCheck> {
  if (await isListening(port, host)) return { inUse: true, how: 'listening' };
  if (!(await canBind(port, host))) return { inUse: true, how: 'bound' };
  return { inUse: false };
}

/** Polls every `pollMs` (default 100) until host:port can be bound; false if `timeoutMs` passes first. */
export async function waitPortFree(port: number, host: string, timeoutMs: number, pollMs = 100): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await canBind(port, host).catch(() => false)) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** A port that was free on `host` a moment ago (the OS's pick); another process could take it before you do. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host }, () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      server.close(() => resolve(port));
    });
  });
}
