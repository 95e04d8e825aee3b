/**
 * An HTTP/1.1 response parser for one connection (RFC 9112), fed the bytes of each socket read in place.
 *
 * It is what the lean connection pool (./h1-pool.ts) reads streamed responses with: a status line and
 * headers, then a body framed by `transfer-encoding: chunked`, by `content-length`, or by the server
 * closing the connection (RFC 9112 §6.3). vLLM's server (uvicorn, behind FastAPI) sends its streams
 * chunked and its JSON answers with a length. Body bytes are handed on as views of the read's buffer,
 * valid only during the call; nothing is copied. Interim (1xx) heads are skipped. A malformed message
 * throws {@link H1ParseError}; the connection is then unusable.
 */

/** What the parser reports, in order: one head, body views, then the message's end. */
export interface H1Events {
  /** The final (non-1xx) status line and headers (names lower-cased; repeated ones joined by `, `). */
  onHead(status: number, headers: Record<string, string>, statusText: string): void;
  /** Body bytes `buf[start, end)`; the view is valid only during the call. */
  onBody(buf: Buffer, start: number, end: number): void;
  /** The message ended; `keepAlive`: the connection may carry another request. */
  onDone(keepAlive: boolean): void;
}

/** A response this parser cannot read; the connection must be closed. */
export class H1ParseError extends Error {
  readonly code = 'HPE_INVALID';
}

/** Longest status line plus headers accepted, bytes (undici's default `maxHeaderSize` is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;

enum S {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailer,
  UntilClose,
  Done,
}

const CR = 13;
const LF = 10;

/** The parser of one response; {@link H1Parser.reset} readies it for the next on the same connection. */
export class H1Parser {
  private s: S = S.Head;
  private head = '';
  private remaining = 0; // Length: body bytes left; ChunkData: bytes left in this chunk
  private line = ''; // ChunkSize: the size line so far
  private trailerLineBytes = 0; // Trailer: bytes of the current line before its CR LF
  private keepAlive = true;

  constructor(
    private readonly ev: H1Events,
    private bodyless = false,
  ) {}

  /** Ready for the next response; `bodyless`: it answers a HEAD request. */
  reset(bodyless = false): void {
    this.s = S.Head;
    this.head = '';
    this.line = '';
    this.remaining = 0;
    this.trailerLineBytes = 0;
    this.keepAlive = true;
    this.bodyless = bodyless;
  }

  /** The message has ended. */
  get done(): boolean {
    return this.s === S.Done;
  }

  /**
   * Bytes `buf[start, end)` arrived. Returns the offset after the message's last byte once it has ended
   * (bytes past it are not this response's), else `end`.
   * @throws H1ParseError on a malformed message.
   */
  feed(buf: Buffer, start: number, end: number): number {
    let i = start;
    while (i < end && this.s !== S.Done) {
      switch (this.s) {
        case S.Head:
          i = this.readHead(buf, i, end);
          break;
        case S.Length:
        case S.ChunkData: {
          const n = Math.min(this.remaining, end - i);
          this.remaining -= n;
          const was = this.s;
          if (this.remaining === 0) this.s = was === S.Length ? S.Done : S.ChunkDataEnd;
          this.ev.onBody(buf, i, i + n);
          i += n;
          if (this.s === S.Done) this.ev.onDone(this.keepAlive);
          break;
        }
        case S.ChunkSize:
          i = this.readChunkSize(buf, i, end);
          break;
        case S.ChunkDataEnd:
          i = this.readDataEnd(buf, i, end);
          break;
        case S.Trailer:
          i = this.readTrailer(buf, i, end);
          break;
        case S.UntilClose:
          this.ev.onBody(buf, i, end);
          i = end;
          break;
      }
    }
    return i;
  }

  /** The server closed the connection: the end of a close-framed body, else an error to report (undefined: none). */
  eof(): H1ParseError | undefined {
    if (this.s === S.UntilClose) {
      this.s = S.Done;
      this.ev.onDone(false);
      return undefined;
    }
    if (this.s === S.Done) return undefined;
    return new H1ParseError(`other side closed before the response ${this.s === S.Head ? 'head' : 'body'} was complete`);
  }

  private readHead(buf: Buffer, i: number, end: number): number {
    const before = this.head.length;
    this.head += buf.toString('latin1', i, end);
    const at = this.head.indexOf('\r\n\r\n', Math.max(0, before - 3));
    if (at < 0) {
      if (this.head.length > MAX_HEAD_BYTES) throw new H1ParseError(`response head longer than ${MAX_HEAD_BYTES} bytes`);
      return end;
    }
    const text = this.head.slice(0, at);
    const next = i + (at + 4 - before);
    this.head = '';
    this.startBody(text);
    return next;
  }

  /** Parse a complete head (without its blank line) and choose the body's framing. */
  private startBody(text: string): void {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]);
    if (!m) throw new H1ParseError(`not an HTTP/1.x status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
    const status = Number(m[2]);
    const headers: Record<string, string> = {};
    for (let k = 1; k < lines.length; k++) {
      const c = lines[k].indexOf(':');
      if (c <= 0) throw new H1ParseError(`malformed header line: ${JSON.stringify(lines[k].slice(0, 80))}`);
      const name = lines[k].slice(0, c).trim().toLowerCase();
      const value = lines[k].slice(c + 1).trim();
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    if (status < 200) return; // interim (100 Continue, 103 Early Hints): the real head follows
    const conn = (headers.connection ?? '').toLowerCase();
    this.keepAlive = m[1] === '1' ? !/\bclose\b/.test(conn) : /\bkeep-alive\b/.test(conn);
    this.ev.onHead(status, headers, m[3] ?? '');
    const te = headers['transfer-encoding'];
    if (this.bodyless || status === 204 || status === 304) this.finish();
    else if (te !== undefined) {
      if (!/^\s*chunked\s*$/i.test(te)) throw new H1ParseError(`unsupported transfer-encoding: ${te}`);
      this.s = S.ChunkSize;
    } else if (headers['content-length'] !== undefined) {
      const n = headers['content-length'];
      if (!/^\d+$/.test(n)) throw new H1ParseError(`invalid content-length: ${JSON.stringify(n)}`);
      this.remaining = Number(n);
      this.s = S.Length;
      if (this.remaining === 0) this.finish();
    } else {
      this.keepAlive = false;
      this.s = S.UntilClose;
    }
  }

  private finish(): void {
    this.s = S.Done;
    this.ev.onDone(this.keepAlive);
  }

  /** `hex-size [; ext] CR LF`. */
  private readChunkSize(buf: Buffer, i: number, end: number): number {
    while (i < end) {
      const b = buf[i++];
      if (b !== LF) {
        if (this.line.length > 1024) throw new H1ParseError('chunk size line longer than 1024 bytes');
        this.line += String.fromCharCode(b);
        continue;
      }
      const m = /^([0-9a-fA-F]{1,12})[ \t]*(;[^\r]*)?\r$/.exec(this.line);
      if (!m) throw new H1ParseError(`invalid chunk size line: ${JSON.stringify(this.line.slice(0, 40))}`);
      this.line = '';
      this.remaining = Number.parseInt(m[1], 16);
      this.s = this.remaining === 0 ? S.Trailer : S.ChunkData;
      this.trailerLineBytes = 0;
      return i;
    }
    return i;
  }

  /** The CR LF after a chunk's data. */
  private readDataEnd(buf: Buffer, i: number, end: number): number {
    while (i < end) {
      const b = buf[i++];
      if (b === CR && this.line === '') this.line = '\r';
      else if (b === LF && this.line === '\r') {
        this.line = '';
        this.s = S.ChunkSize;
        return i;
      } else throw new H1ParseError('chunk data not followed by CR LF');
    }
    return i;
  }

  /** Trailer fields after the last chunk, up to an empty line. */
  private readTrailer(buf: Buffer, i: number, end: number): number {
    while (i < end) {
      const b = buf[i++];
      if (b === CR) continue;
      if (b !== LF) {
        this.trailerLineBytes++;
        continue;
      }
      if (this.trailerLineBytes === 0) {
        this.finish();
        return i;
      }
      this.trailerLineBytes = 0;
    }
    return i;
  }
}
