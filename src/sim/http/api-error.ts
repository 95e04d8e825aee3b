/** vLLM's API error as the simulator raises it (moved from src/sim/http/reply.ts, which re-exports it). */
import type { ErrorInfo } from '../../wire/chunks';
import type { GenerationId } from './wire-shapes';

/** A vLLM-style API error: `status` is both the HTTP status and `error.code`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** vLLM's `error.type`, e.g. `BadRequestError`, `NotFoundError`, `Bad Request`. */
    readonly type = 'BadRequestError',
    readonly param: string | null = null,
  ) {
    super(message);
  }

  /** The message as older generations word it, where it differs (wire-shapes.ts `errorInfoFor`). */
  wording?: Partial<Record<GenerationId, string>>;

  /** Sets `wording` and returns this. */
  wordedAs(wording: Partial<Record<GenerationId, string>>): this {
    this.wording = wording;
    return this;
  }

  /** The status, message, type, param and wording (what wire-shapes.ts renders per generation). */
  get parts() {
    return { status: this.status, message: this.message, type: this.type, param: this.param, wording: this.wording };
  }

  /** The `{"error":{message,type,param,code}}` body (vLLM ≥ 0.10.1; shape in src/wire/chunks.ts). */
  body(): { error: ErrorInfo } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}
