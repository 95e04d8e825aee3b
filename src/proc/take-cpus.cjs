// A helper thread started by the simulator's pinned engine thread inherits its one CPU (src/proc/cpu-split.ts);
// work on that CPU would delay the engine's steps. `takeCpus(list)` gives the calling thread the CPUs the process
// had (a `taskset` list, from `cpusBeforePin()`); nothing when `list` is empty or anything fails.
// Plain CommonJS, so the tokenizer worker (a .cjs file) and the alarm thread (eval'd source) both require it.
'use strict';

function takeCpus(list) {
  if (!list) return;
  try {
    const tid = /task\/(\d+)$/.exec(require('node:fs').readlinkSync('/proc/thread-self'))[1];
    require('node:child_process').execFileSync('taskset', ['-p', '-c', list, tid], { stdio: 'ignore', timeout: 5000 });
  } catch {
    // stays on the engine's CPU
  }
}

module.exports = { takeCpus };
