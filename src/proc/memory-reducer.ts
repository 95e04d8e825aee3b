/**
 * V8's memory reducer, kept out of the threads that measure. The reducer collects a heap that looks idle: eight
 * seconds after a full collection (or after its heap grew), if the thread allocates little, it starts a full
 * collection, and up to two more half a second apart (`kLongDelayMs`, `kShortDelayMs`, `NotifyTimer` in V8's
 * `src/heap/memory-reducer.cc`). A thread that stamps token chunks at a low rate (a serial point, a few streams)
 * looks idle to it, and each such collection pauses the thread inside the measured load: in lessons 01 and 05,
 * 1.4–19.4 ms (bench/README.md §32). perf_hooks reports them as `gc` entries of kind major with flags 32
 * (`NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY`, the `kGCCallbackFlagCollectAllExternalMemory` the reducer starts
 * them with).
 *
 * V8 gives a heap a reducer only if `--memory-reducer` is on when the heap is set up (`Heap::SetUp`,
 * `src/heap/heap.cc`), and its flags are the process's. So a worker thread started while the flag is off never gets
 * one. The simulator's process has it off from its command line (src/sim/start.ts); the threads a run starts to send
 * its load get it off from {@link holdMemoryReducerOff}. A thread that already has a reducer keeps it.
 */
import { setFlagsFromString } from 'node:v8';

/** Holds on this thread (module state is per thread): the flag goes off with the first and back on after the last. */
let holds = 0;

/** Whether this process was started with the reducer off; then a hold leaves the flag alone. */
function offFromStart(): boolean {
  return process.execArgv.includes('--no-memory-reducer');
}

/**
 * Turn V8's memory reducer off for the heaps set up from now on (worker threads started meanwhile), until the
 * returned release. Holds nest: the flag goes back on when the last one is released (safe to call twice). Holds
 * are counted per thread, so runs started from two threads at once may turn it back on early: the threads started
 * after that get a reducer.
 */
export function holdMemoryReducerOff(): () => void {
  if (holds++ === 0 && !offFromStart()) setFlagsFromString('--no-memory-reducer');
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holds === 0 && !offFromStart()) setFlagsFromString('--memory-reducer');
  };
}

/** Whether a hold is in place on this thread (or the process started with the reducer off). */
export function memoryReducerHeldOff(): boolean {
  return holds > 0 || offFromStart();
}
