/**
 * Profile files: find one by NAME (a file stem under `profiles/`) or FILE (a path), read it and
 * check it (`profile-schema.ts`). A NAME that is not there gets a "did you mean".
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { packageRoot } from '../../paths';
import { didYouMean } from './nearest-name';
import { parseProfileDocument, type ProfileDocument } from './profile-schema';

/** Stem of the profile used when none is given: RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4. */
export const DEFAULT_PROFILE_NAME = 'rtx4090-qwen2.5-7b-instruct-gptq-int4';

/**
 * The profile to use when none is given: `LOADLAB_SIM_PROFILE` (a NAME or FILE) when set, so every lesson,
 * its predictions and its simulator follow one choice; else `DEFAULT_PROFILE_NAME`.
 */
export function defaultProfileName(env: Record<string, string | undefined> = process.env): string {
  return env.LOADLAB_SIM_PROFILE?.trim() || DEFAULT_PROFILE_NAME;
}

/** A profile file, read and checked. */
export interface LoadedProfile extends ProfileDocument {
  /** Absolute path of the file. */
  file: string;
  /** The file's text as read (what `loadlab sim --print-profile` prints). */
  text: string;
}

/** The folder of shipped profiles: `<package root>/profiles`. */
export function profilesDir(): string {
  return join(packageRoot(), 'profiles');
}

/** Stems of the shipped profiles, sorted (`profiles/*.json`). */
export function listProfiles(dir: string = profilesDir()): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** A FILE is anything with a path separator or a `.json` suffix; everything else is a NAME. */
function looksLikePath(s: string): boolean {
  return s.includes('/') || s.includes('\\') || s.endsWith('.json');
}

/**
 * The absolute file a `--profile` value means: a path as given (relative to the working directory),
 * or `profiles/<NAME>.json`.
 * @throws Error naming the fix when the file or name does not exist (with a "did you mean" for names).
 */
export function resolveProfilePath(nameOrFile: string, dir: string = profilesDir()): string {
  const v = nameOrFile.trim();
  if (v === '') throw new Error(`--profile needs a NAME or FILE; shipped profiles: ${listProfiles(dir).join(', ')}`);
  if (looksLikePath(v)) {
    const file = resolve(v);
    if (!existsSync(file)) {
      const stem = basename(v).replace(/\.json$/, '');
      const shipped = listProfiles(dir).includes(stem) ? ` (a shipped profile has this name: use --profile ${stem})` : '';
      throw new Error(`profile file ${file} does not exist${shipped}; give an existing JSON file or a NAME from profiles/`);
    }
    return file;
  }
  const names = listProfiles(dir);
  if (!names.includes(v)) {
    const near = didYouMean(v, names);
    const all = near ? ' (`loadlab sim --help` lists them all)' : `: ${names.join(', ')}`;
    throw new Error(`unknown profile '${v}'.${near} Give a NAME from profiles/${all}, or a path to a profile file`);
  }
  return join(dir, `${v}.json`);
}

/**
 * Read and check a profile file (default: `defaultProfileName()`). Throws `<file>: <field>: <problem>; <fix>`
 * on a bad file, or the `resolveProfilePath` message on a missing one.
 */
export function loadProfileFile(nameOrFile: string = defaultProfileName(), dir: string = profilesDir()): LoadedProfile {
  let file: string;
  try {
    file = resolveProfilePath(nameOrFile, dir);
  } catch (err) {
    const fromEnv = process.env.LOADLAB_SIM_PROFILE?.trim() === nameOrFile ? 'LOADLAB_SIM_PROFILE: ' : '';
    throw new Error(`${fromEnv}${(err as Error).message}`);
  }
  const text = readFileSync(file, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `${file}: not valid JSON (${(err as Error).message}); fix the syntax or start again from a file under profiles/`,
    );
  }
  return { ...parseProfileDocument(json, file), file, text };
}
