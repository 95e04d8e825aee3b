/**
 * `loadlab sim [model] [--host H] [--port P] [vllm serve flags]`: runs the simulated vLLM
 * server in this process until SIGINT/SIGTERM. `--help` prints the flags table.
 */
import { runSimProcess } from '../sim/serve';

/**
 * Runs the simulator in-process. Resolves once it listens (the server keeps the process
 * alive), or right after printing help; on a bad flag it prints the reason and sets
 * `process.exitCode = 1`.
 */
export async function simCommand(argv: string[]): Promise<void> {
  await runSimProcess(argv);
}
