/**
 * Process entry of the simulated vLLM server:
 * `node --import tsx src/sim/main.ts [model] [vllm serve flags]` (see `runSimProcess`).
 */
import { runSimProcess } from './serve';

void runSimProcess(process.argv.slice(2));
