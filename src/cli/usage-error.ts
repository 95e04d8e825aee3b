/** A command-line mistake of `loadlab run`; the message says what to fix (exit 2). Its own module so flag modules share it without a cycle. */
export class UsageError extends Error {}
