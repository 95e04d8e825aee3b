/**
 * HTTP 405 with an `Allow` header, as Starlette answers a path whose route takes other
 * methods (`starlette/routing.py`: `Route.handle` raises `HTTPException(405, headers={"Allow":
 * ", ".join(self.methods)})`; RFC 9110 §15.5.6 requires the header). The body keeps vLLM's
 * error shape, like the simulator's other errors.
 */
import { ApiError } from './reply';

/** A 405 that knows which methods the path takes. */
export class MethodNotAllowed extends ApiError {
  /** The `Allow` header value, e.g. `POST` or `GET, HEAD`. */
  readonly allow: string;

  /** `methods`: what the path answers, e.g. `['GET', 'HEAD']`. */
  constructor(methods: readonly string[]) {
    super(405, 'Method Not Allowed', 'Method Not Allowed');
    this.allow = methods.join(', ');
  }
}
