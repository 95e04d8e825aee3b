/** Where a CLI command writes. Its own module so that subcommands need not import `main.ts`, which imports them. */

/** Where the CLI writes; default the process streams. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}
