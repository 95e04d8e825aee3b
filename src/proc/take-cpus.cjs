// A helper thread started by the simulator's pinned engine thread inherits its one CPU (src/proc/cpu-split.ts);
// work on that CPU would delay the engine's steps. `takeCpus(list)` gives the calling thread the CPUs the process
// had (a `taskset` list, from `cpusBeforePin()`); nothing when `list` is empty or anything fails.
// Plain CommonJS, so the tokenizer worker (a .cjs file) and the alarm thread (eval'd source) both require it.
'use strict';

/** The calling thread's id (throws where there is no /proc/thread-self). */
function thisTid() {
  return /task\/(\d+)$/.exec(require('node:fs').readlinkSync('/proc/thread-self'))[1];
}

function takeCpus(list) {
  if (!list) return;
  try {
    require('node:child_process').execFileSync('taskset', ['-p', '-c', list, thisTid()], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // stays on the engine's CPU
  }
}

// `idleThisThread()` puts the calling thread on SCHED_IDLE (`chrt -i -p 0 <tid>`): it then runs only when a CPU
// would idle, and gives way to any other thread that wakes (`sched(7)`). The simulator's tokenizer does this when the
// engine is pinned, as the simulator's other helper threads already are (./idle-threads.ts): a thread at the normal
// policy on the engine's CPU can hold a waking step until its slice ends (bench/README.md §16, §19). Nothing when
// anything fails.
function idleThisThread() {
  try {
    require('node:child_process').execFileSync('chrt', ['-i', '-p', '0', thisTid()], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // keeps the normal policy
  }
}

module.exports = { takeCpus, idleThisThread };
