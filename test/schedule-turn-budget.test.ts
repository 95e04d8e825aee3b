import { describe, expect, it } from 'vitest';
import { turnBudget } from '../src/schedule/turn-budget';

/** One loop iteration: an Immediate set now runs in this iteration's check phase, one set from there in the next. */
const nextIteration = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

// A scripted clock: each task "costs" what it adds to `t`, so the budget's decisions are exact.
describe('turnBudget', () => {
  it('runs tasks at once while the turn has spent less than the budget, then queues the rest in order', async () => {
    let t = 0;
    const work = turnBudget(1, () => t);
    const ran: number[] = [];
    for (let i = 0; i < 6; i++)
      work.run(() => {
        ran.push(i);
        t += 0.4; // 0.4 ms each: three fit in a 1 ms turn (0, 0.4, 0.8 start within it)
      });
    expect(ran).toEqual([0, 1, 2]);
    expect(work.queued).toBe(3);
    await nextIteration();
    // the next turn (from its check phase) takes the queue again within its own budget
    expect(ran).toEqual([0, 1, 2, 3, 4, 5]);
    expect(work.queued).toBe(0);
  });

  it('gives the loop a turn between slices: an Immediate set by a task runs before the next slice', async () => {
    let t = 0;
    const work = turnBudget(1, () => t);
    const order: string[] = [];
    for (let i = 0; i < 9; i++)
      work.run(() => {
        order.push(`task ${i}`);
        t += 0.5;
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

  it('drain runs everything queued now, in order', () => {
    let t = 0;
    const work = turnBudget(1, () => t);
    const ran: number[] = [];
    for (let i = 0; i < 5; i++)
      work.run(() => {
        ran.push(i);
        t += 1;
      });
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
