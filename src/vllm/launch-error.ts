/** The error `launchVllm` rejects with (re-exported by `launcher.ts`). */
import type { LaunchFailureKind } from './launch-diagnosis';

/** A launch that failed: `kind` says why (see `launch-diagnosis.ts`), the message says what to do. */
export class LaunchError extends Error {
  /**
   * @param logTail the server's last log lines ('' when it never ran)
   * @param pid the server's pid (= process group), when it was spawned
   */
  constructor(
    message: string,
    readonly kind: LaunchFailureKind | 'timeout' | 'config',
    readonly logTail: string = '',
    readonly pid?: number,
  ) {
    super(message);
    this.name = 'LaunchError';
  }
}
