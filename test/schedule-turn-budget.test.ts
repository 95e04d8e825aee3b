import { describe, expect, it } from 'vitest';
import { type TurnBudget, turnBudget } from '../src/schedule/turn-budget';

/** One loop iteration: an Immediate set now runs in this iteration's check phase, one set from there in the next. */
const nextIteration = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

// A scripted clock: each task "costs" what it adds to `clock.t`, so the budget's decisions are exact.
type Clock = { t: number };

/** Hand `work` tasks 0..n−1, in order: each calls `each(i)`, then costs `costMs` on `clock`. */
function runTasks(work: TurnBudget, clock: Clock, n: number, costMs: number, each: (i: number) => void): void {
  for (let i = 0; i < n; i++)
    work.run(() => {
      each(i);
      clock.t += costMs;
    });
}

describe('turnBudget', () => {
  it('runs tasks at once while the turn has spent less than the budget, then queues the rest in order', async () => {
    const clock = { t: 0 };
    const work = turnBudget(1, () => clock.t);
    const ran: number[] = [];
    // 0.4 ms each: three fit in a 1 ms turn (0, 0.4, 0.8 start within it)
    runTasks(work, clock, 6, 0.4, (i) => ran.push(i));
    expect(ran).toEqual([0, 1, 2]);
    expect(work.queued).toBe(3);
    await nextIteration();
    // the next turn (from its check phase) takes the queue again within its own budget
    expect(ran).toEqual([0, 1, 2, 3, 4, 5]);
    expect(work.queued).toBe(0);
  });

  it('gives the loop a turn between slices: an Immediate set by a task runs before the next slice', async () => {
    const clock = { t: 0 };
    const work = turnBudget(1, () => clock.t);
    const order: string[] = [];
    runTasks(work, clock, 9, 0.5, (i) => {
      order.push(`task ${i}`);
      if (i === 2) setImmediate(() => order.push('immediate set by task 2'));
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Tasks 0-1 run at once; 2-3 in this iteration's check phase; the Immediate task 2 set is queued behind
    // that phase's next slice, which is set from the check phase, so it runs in the next iteration, after a poll.
    expect(order).toEqual([
      'task 0',
      'task 1',
      'task 2',
      'task 3',
      'immediate set by task 2',
      'task 4',
      'task 5',
      'task 6',
      'task 7',
      'task 8',
    ]);
  });

  it('keeps the order: a task arriving while others wait queues behind them, even with budget left', async () => {
    let t = 0;
    const work = turnBudget(1, () => t);
    const ran: string[] = [];
    work.run(() => {
      ran.push('a');
      t += 2; // spends the turn
    });
    work.run(() => ran.push('b')); // queued: the budget is spent
    await nextIteration();
    work.run(() => ran.push('c')); // a fresh turn, nothing waiting: at once
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it("later: a promise of the task's result, rejected when the task throws at once", async () => {
    const work = turnBudget(1, () => 0);
    await expect(work.later(() => Promise.resolve(7))).resolves.toBe(7);
    await expect(
      work.later(() => {
        throw new Error('at once');
      }),
    ).rejects.toThrow('at once');
  });

  it('drain runs everything queued now, in order', () => {
    const clock = { t: 0 };
    const work = turnBudget(1, () => clock.t);
    const ran: number[] = [];
    runTasks(work, clock, 5, 1, (i) => ran.push(i));
    expect(ran).toEqual([0]);
    work.drain();
    expect(ran).toEqual([0, 1, 2, 3, 4]);
    expect(work.queued).toBe(0);
  });

  it('rejects a budget that is not a positive number of ms, naming an example', () => {
    expect(() => turnBudget(0)).toThrow(/positive number of ms, e\.g\. 0\.5/);
    expect(() => turnBudget(Number.NaN)).toThrow(TypeError);
  });
});
