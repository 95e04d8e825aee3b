/**
 * Send what a response has written now. Node's `res.write` corks the socket and uncorks it on the next
 * tick (`connectionCorkNT`, node/lib/_http_outgoing.js), so every stream a timer callback writes would
 * reach the kernel only after the callback's last line. A server that stamps its sends (the simulator's
 * send log, the null server's `GET /sent`) flushes each stream right after writing it, as uvicorn's
 * transport tries the send at once (asyncio's `_SelectorSocketTransport.write`, cpython
 * Lib/asyncio/selector_events.py: "Optimization: try to send now"), and takes the send time just
 * before the flush: a lower bound of when the bytes could be read.
 */
export function flushNow(res: { readonly socket: { readonly writableCorked: number; uncork(): void } | null }): void {
  const sock = res.socket;
  while (sock && sock.writableCorked > 0) sock.uncork();
}
