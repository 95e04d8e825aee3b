/**
 * A streamed response's events written straight to its socket: one HTTP chunk per event in one
 * `socket.write`, as uvicorn frames a body message for vLLM, and the drain of such a socket.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The socket a streamed response's events can be written to directly, or undefined: once the headers went out
 * with chunked encoding on a socket of its own. Then each event is one HTTP chunk in one `socket.write`, framed as
 * uvicorn frames a body message for vLLM (`uvicorn/protocols/http/httptools_impl.py`, `send`: one
 * `transport.write` of `b"%x\r\n" % len(body)`, the body and `b"\r\n"`). Node's `res.write` would cork the
 * socket, buffer the size line, the data and the CRLF apart, schedule a tick to uncork, and hand the kernel three
 * pieces in one `writev`. `res.end` still writes the last chunk and the terminating `0\r\n\r\n`.
 * Before a socket is assigned (a pipelined request waiting its turn), or without chunked encoding (an HTTP/1.0
 * client), events go through `res.write`.
 */
export function chunkSocket(res: ServerResponse): Socket | undefined {
  const sock = res.socket;
  // `writable`: not ended (Node ends a socket whose client half-closed) nor destroyed; else `res.write` decides.
  return sock && res.headersSent && res.chunkedEncoding && sock.writable ? sock : undefined;
}

/** One HTTP/1.1 chunk: the data's size in hex, CRLF, the data, CRLF; nothing for no data (a zero-size chunk ends the body). */
export function chunkFrame(data: string): string {
  if (data === '') return '';
  return `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
}

/**
 * Calls `fn` once `res` can take more. A chunk written to the socket itself drains there; Node's `res` emits 'drain'
 * only after its own writes. A socket listener is dropped when the response closes first: a kept-alive socket must
 * not call it for a later response.
 */
export function onceDrained(res: ServerResponse, fn: () => void): void {
  const sock = chunkSocket(res);
  if (!sock?.writableNeedDrain || res.writableNeedDrain) return void res.once('drain', fn);
  const drop = () => sock.off('drain', drained);
  const drained = () => {
    res.off('close', drop);
    fn();
  };
  sock.once('drain', drained);
  res.once('close', drop);
}
