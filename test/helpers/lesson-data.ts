/**
 * Lesson tests read what `npm run lessons` saved. Locally they are skipped when it has not run;
 * in CI (`CI` set), which executes the lessons first, missing data is a failure, never a skip.
 */
export function lessonDataReady(ready: boolean, what: string): boolean {
  if (!ready && process.env.CI) {
    throw new Error(
      `${what} is missing: CI runs \`npm run lessons\` before the tests, so a lesson did not save its runs (see its output above).`,
    );
  }
  return ready;
}
