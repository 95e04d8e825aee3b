/**
 * Driving a `sessions` shape (./sessions.ts): WHEN each turn goes, and with which history.
 *
 * A pool of `maxConcurrency` slots runs one conversation per slot. Turn 0 is intended the moment
 * its slot frees; turn k+1 at `endMs` of turn k's record + `thinkTimeMs`, paced on the absolute
 * clock (`sleepUntil`), so the record's `queueMs` still means "waited inside the client" and
 * `ttftFromIntendedMs` counts from when the user would have sent it. Turn k+1 carries the answers
 * actually received (the client hands the text over through `onText`; records never hold it).
 * A failed turn (a record with `ok: false`) ends its conversation: the record carries the error
 * code, and the later turns are never sent. Abort: no new turn is sent, conversations waiting for
 * a slot never start, in-flight turns end as the caller's `aborted` records.
 */

import type { ErrorCode, RequestRecord, RequestSpec } from '../types';
import { sleepUntil } from './pacer';
import { createPool, settleTasks } from './pool';
import { sessionTurns, type SessionsShape, turnPositions, turnSpec } from './sessions';

/** Which conversation and turn a request is, and where its answer text goes. */
export interface SessionTurnInfo {
  session: string;
  /** 0-based turn. */
  turn: number;
  /** Receives the answer text (pass it to the client's `SendContext.onText`). */
  onText: (text: string) => void;
}

/**
 * Send turn request `i` (its fixed position, see `turnPositions`) and resolve with its record,
 * or undefined when it was not sent because the run stopped.
 */
export type SessionFire = (
  i: number,
  spec: RequestSpec,
  intendedStartMs: number,
  info: SessionTurnInfo,
) => Promise<RequestRecord | undefined>;

/** A conversation that a failed turn ended. */
export interface StoppedSession {
  session: string;
  turn: number;
  code: ErrorCode | 'unknown';
}

/** What the sessions driver saw. */
export interface SessionsReport {
  /** How late each turn after the first left versus end of the previous turn + think time, ms. */
  latenessMs: number[];
  /** Turns sent (`fire` resolved with a record). */
  dispatched: number;
  conversations: number;
  /** Conversations whose every turn completed. */
  finished: number;
  /** Conversations ended by a failed turn, with that turn and its error code. */
  stopped: StoppedSession[];
  /** Turns never sent: after a failed turn, or because the run stopped. */
  turnsNotSent: number;
}

/**
 * Run every conversation of `shape` through `fire` (see the module comment); resolves when all
 * are done. Rejects only if `fire` rejects while not aborted (a bug, not a failed request).
 */
export async function runSessions(
  shape: SessionsShape,
  fire: SessionFire,
  opts: { /** The run's clock, ms. */ now: () => number /** Stop sending when aborted. */; signal: AbortSignal },
): Promise<SessionsReport> {
  const { now, signal } = opts;
  const think = shape.thinkTimeMs ?? 0;
  const positions = turnPositions(shape);
  const report: SessionsReport = {
    latenessMs: [],
    dispatched: 0,
    conversations: shape.conversations.length,
    finished: 0,
    stopped: [],
    turnsNotSent: 0,
  };

  const converse = async (c: number): Promise<void> => {
    const script = shape.conversations[c];
    const answers: string[] = [];
    let due = now();
    for (let k = 0; k < script.turns.length; k++) {
      if (k > 0) report.latenessMs.push(due > now() ? await sleepUntil(due, { now, signal }) : now() - due);
      if (signal.aborted) return;
      let text = '';
      const info = { session: script.id, turn: k, onText: (t: string) => void (text = t) };
      const record = await fire(positions[c][k], turnSpec(script, k, answers), due, info);
      if (record === undefined) return;
      report.dispatched++;
      if (!record.ok) {
        report.stopped.push({ session: script.id, turn: k, code: record.error?.code ?? 'unknown' });
        return;
      }
      answers.push(text);
      due = record.endMs + think;
    }
    report.finished++;
  };

  const pool = createPool(shape.maxConcurrency);
  const tasks = shape.conversations.map((_, c) => pool.run(() => (signal.aborted ? undefined : converse(c))));
  await settleTasks(tasks, signal, pool);
  report.turnsNotSent = sessionTurns(shape) - report.dispatched;
  return report;
}
