/**
 * Tokenizes prompts off the simulator's event loop, in worker threads, as vLLM does: its API
 * server awaits the tokenizer through `AsyncMicrobatchTokenizer` (`vllm/utils/async_utils.py`:
 * "A single-thread ThreadPoolExecutor is used so the event loop stays responsive"; used by
 * `vllm/entrypoints/openai/serving_engine.py`), so /health and running streams never wait for it.
 * Two lanes: a persistent worker for ordinary prompts, and a worker for very long ones that
 * ends when its queue drains and runs at low CPU priority, so one huge prompt neither delays
 * the others, nor starves the event loop on a busy machine, nor keeps its memory. The worker is a plain CommonJS file (tokenize-worker.cjs) found from the package root.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../../paths';
import { cpusBeforePin } from '../../proc/cpu-split';

/** Prompts longer than this (characters) go to the long-prompt lane. Default 256 Ki chars. */
export const LONG_PROMPT_CHARS = 256 * 1024;

interface Job {
  resolve: (out: { ids?: Int32Array; value?: unknown; cutChars?: number }) => void;
  reject: (err: Error) => void;
}

/** A JSON body the worker could not parse; `message` is `JSON.parse`'s. */
export class JsonSyntaxError extends Error {}

/** One worker thread and its queue; spawned on first use, respawned after a crash. */
class Lane {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Job>();
  private seq = 0;
  /** Resolves {@link start}'s promise. */
  private onBooted: (() => void) | undefined;

  /**
   * `keep`: keep the worker after its queue drains (false = end it, freeing its memory);
   * `nice`: the worker thread's nice value (Linux: per thread), 0 = the process's.
   */
  constructor(
    private readonly keep: boolean,
    private readonly nice = 0,
  ) {}

  get busy(): number {
    return this.pending.size;
  }

  /** Sends `msg` (plus an id) to the worker; `transfer` moves buffers instead of copying them. */
  run(
    msg: { text?: string; json?: Uint8Array; cut?: number },
    transfer: ArrayBuffer[] = [],
  ): Promise<{ ids?: Int32Array; value?: unknown; cutChars?: number }> {
    return new Promise((resolve, reject) => {
      const id = ++this.seq;
      this.pending.set(id, { resolve, reject });
      const w = this.spawn();
      w.ref();
      w.postMessage({ id, ...msg }, transfer);
    });
  }

  /**
   * Start the worker now, with nothing to do yet (once booted, it does not keep the process alive); resolves once
   * it has booted (moved off the engine's CPU and yielding, when pinned), or failed (a later job starts another).
   */
  start(): Promise<void> {
    if (this.worker) return Promise.resolve();
    const booted = new Promise<void>((resolve) => {
      this.onBooted = resolve;
    });
    this.spawn(); // kept referenced until it has booted, so a process waiting for that stays alive
    return booted;
  }

  close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.fail(new Error('the tokenizer was closed'));
    return w ? w.terminate().then(() => undefined) : Promise.resolve();
  }

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(join(packageRoot(), 'src', 'sim', 'http', 'tokenize-worker.cjs'), {
      workerData: { packageJson: join(packageRoot(), 'package.json'), nice: this.nice, cpus: cpusBeforePin() },
      execArgv: [], // no tsx loader needed (plain .cjs), and none of the parent's flags
      stdout: false,
      stderr: false,
    });
    w.on(
      'message',
      (m: {
        id: number;
        ids?: Int32Array;
        value?: unknown;
        cutChars?: number;
        error?: string;
        syntax?: boolean;
        ready?: true;
      }) => {
        if (m.ready) return this.endBootWait();
        const job = this.pending.get(m.id);
        if (!job) return;
        this.pending.delete(m.id);
        if (m.error === undefined) job.resolve(m);
        else job.reject(m.syntax ? new JsonSyntaxError(m.error) : new Error(`tokenizer worker: ${m.error}`));
        if (this.pending.size === 0) this.idle(w);
      },
    );
    w.on('error', (err) => this.crashed(w, err));
    w.on('exit', (code) => this.crashed(w, new Error(`tokenizer worker exited with code ${code}`)));
    this.worker = w;
    return w;
  }

  private idle(w: Worker): void {
    if (this.keep) return void w.unref();
    this.worker = undefined;
    void w.terminate();
  }

  /** The wait of {@link start} ends. */
  private endBootWait(): void {
    const done = this.onBooted;
    this.onBooted = undefined;
    if (this.pending.size === 0) this.worker?.unref();
    done?.();
  }

  private crashed(w: Worker, err: Error): void {
    this.endBootWait();
    if (this.worker !== w) return;
    this.worker = undefined;
    this.fail(err);
  }

  private fail(err: Error): void {
    for (const job of this.pending.values()) job.reject(err);
    this.pending.clear();
  }
}

/** Tokenizes prompts in worker threads; `close()` ends them. */
export class TokenizePool {
  private readonly ordinary = new Lane(true);
  /** At nice 19, so a huge prompt's tokenizing takes CPU from the engine's event loop last. */
  private readonly long = new Lane(false, 19);

  /** Resolves once the ordinary lane's early worker has booted (at once when there is none). */
  private readonly started: Promise<void>;

  /**
   * With the engine pinned, the ordinary lane's worker starts with the pool (the server). A thread started by the
   * pinned engine thread boots on the engine's CPU at the normal policy before it moves off and yields
   * (tokenize-worker.cjs): about 30 ms that, started on a run's first long prompt, held the engine's steps
   * (bench/README.md §19). Started with the server, which listens only after {@link booted}, it boots before any run
   * (§20: started without that wait, its boot still met a run that began as the server listened).
   */
  constructor() {
    this.started = cpusBeforePin() !== undefined ? this.ordinary.start() : Promise.resolve();
  }

  /** Resolves once an early worker has booted, or failed; at once when none was started. */
  booted(): Promise<void> {
    return this.started;
  }

  /** Token ids of `text` (no special tokens added), computed in a worker thread. */
  async encode(text: string): Promise<number[]> {
    const { ids } = await (text.length > LONG_PROMPT_CHARS ? this.long : this.ordinary).run({ text });
    return Array.from(ids ?? []);
  }

  /**
   * `JSON.parse` of UTF-8 `bytes` in the long-prompt lane; the bytes are moved, not copied, when
   * they own their whole buffer. With `cut` > 0, every string longer than `cut` characters comes
   * back as '' and `cutChars` is the longest one's length (0 when none). Rejects with
   * `JsonSyntaxError` on bad JSON.
   */
  async parseJson(bytes: Buffer, cut = 0): Promise<{ value: unknown; cutChars: number }> {
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const json = own ? new Uint8Array(bytes.buffer as ArrayBuffer) : Uint8Array.from(bytes);
    const out = await this.long.run({ json, cut }, [json.buffer as ArrayBuffer]);
    return { value: out.value, cutChars: out.cutChars ?? 0 };
  }

  /** Jobs waiting or running, both lanes. */
  get busy(): number {
    return this.ordinary.busy + this.long.busy;
  }

  /** End both workers; pending jobs reject. */
  async close(): Promise<void> {
    await Promise.all([this.ordinary.close(), this.long.close()]);
  }
}
