/**
 * The shape of one doctor check's outcome, shared by `doctor.ts` (which runs and shows the
 * checks) and `doctor-env.ts` / `doctor-target.ts` (which make them), so none of them imports
 * another in a circle.
 */

/** One check's outcome. */
export interface Check {
  /** Short name, e.g. `node`, `tslab kernel`, `port 8000`. */
  name: string;
  /** `required`: a failure makes the doctor fail (exit 1); `optional`: a failure is a warning. */
  level: 'required' | 'optional';
  ok: boolean;
  /** What was found, in words (versions, paths, numbers as measured). */
  detail: string;
  /** The one command that fixes a failure (absent when ok). */
  fix?: string;
}
