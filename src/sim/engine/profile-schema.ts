/**
 * The profile file format (`profiles/*.json`, format `loadlab-sim-profile/1`) and its checker.
 * Every number is `{ "value", "unit", "source", "note" }`: the unit is fixed per field (so a
 * GB/s written where B/s belongs is caught), `source` is one of `SOURCE_TAGS` and `note` says which
 * document or derivation it rests on. A `calibration` block (`{ against, residuals, intervals }`)
 * is where a fit records what it ran against; the `fit` tag is only allowed with one.
 */
import { didYouMean } from './nearest-name';
import {
  CONVERT,
  FIELDS,
  KINDS,
  type Kind,
  PROFILE_FORMAT,
  PROFILE_STATUSES,
  type ProfileCalibration,
  SOURCE_TAGS,
  TEXT_FIELDS,
  TOP_FIELDS,
} from './profile-fields';
import type { Profile, ProfileStatus } from './profile-types';

export {
  PROFILE_FORMAT,
  PROFILE_STATUSES,
  type ProfileCalibration,
  SOURCE_TAGS,
  type SourcedNumber,
  type SourceTag,
} from './profile-fields';

/** A checked profile file. */
export interface ProfileDocument {
  profile: Profile & { status: ProfileStatus };
  description?: string;
  notes: string[];
  calibration?: ProfileCalibration;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A profile-file error: `<file>: <field>: <problem>; <fix>`. */
function fail(where: string, field: string, problem: string, fix: string): never {
  throw new Error(`${where}: ${field}: ${problem}; ${fix}`);
}

function checkKeys(where: string, path: string, obj: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) {
      fail(
        where,
        `${path}${k}`,
        'unknown field',
        `remove it or fix its name.${didYouMean(k, allowed)} Allowed: ${allowed.join(', ')}`,
      );
    }
  }
}

function unitFix(kind: Kind, unit: unknown): string {
  const factor = typeof unit === 'string' ? CONVERT[kind.unit]?.[unit] : undefined;
  return factor !== undefined
    ? `write the value in ${kind.unit} (multiply by ${factor}) and set "unit": "${kind.unit}"`
    : `set "unit": "${kind.unit}" and give the value in ${kind.unit}`;
}

function checkNumber(where: string, field: string, raw: unknown, kind: Kind, calibrated: boolean): number {
  const example = `{ "value": …, "unit": "${kind.unit}", "source": "spec", "note": "which document or formula" }`;
  if (raw === undefined) fail(where, field, 'missing', `add ${example}`);
  if (!isObject(raw)) fail(where, field, `must be an object, got ${JSON.stringify(raw)}`, `write ${example}`);
  checkKeys(where, `${field}.`, raw, ['value', 'unit', 'source', 'note']);
  if (raw.unit !== kind.unit)
    fail(where, `${field}.unit`, `must be "${kind.unit}", got ${JSON.stringify(raw.unit)}`, unitFix(kind, raw.unit));
  const v = raw.value;
  if (typeof v !== 'number' || !Number.isFinite(v))
    fail(where, `${field}.value`, `must be a number, got ${JSON.stringify(v)}`, `give the value in ${kind.unit}`);
  const low = kind.openMin ? v <= kind.min : v < kind.min;
  if (low || v > kind.max || (kind.integer && !Number.isInteger(v))) {
    const range = `${kind.openMin ? '(' : '['}${kind.min}, ${kind.max}]`;
    fail(
      where,
      `${field}.value`,
      `${v} ${kind.unit} is outside ${range}${kind.integer ? ' or not an integer' : ''}`,
      `check the unit: the value must be in ${kind.unit}`,
    );
  }
  const tags: readonly string[] = SOURCE_TAGS;
  if (!tags.includes(raw.source as string)) {
    fail(
      where,
      `${field}.source`,
      `must be one of ${SOURCE_TAGS.join(', ')}, got ${JSON.stringify(raw.source)}`,
      'tag where the number comes from',
    );
  }
  if (raw.source === 'fit' && !calibrated)
    fail(
      where,
      `${field}.source`,
      '"fit" without a calibration block',
      'add "calibration": { against, residuals, intervals } or use another tag',
    );
  if (typeof raw.note !== 'string' || raw.note.trim() === '')
    fail(where, `${field}.note`, 'missing', 'say which document or formula the number rests on');
  return v;
}

function checkSection(
  where: string,
  doc: Record<string, unknown>,
  name: 'gpu' | 'model' | 'perf',
  calibrated: boolean,
): Record<string, unknown> {
  const sec = doc[name];
  if (!isObject(sec))
    fail(
      where,
      name,
      sec === undefined ? 'missing' : 'must be an object',
      `add the "${name}" section (see profiles/ for examples)`,
    );
  const numbers = FIELDS[name];
  checkKeys(where, `${name}.`, sec, [...TEXT_FIELDS[name], ...Object.keys(numbers)]);
  const out: Record<string, unknown> = {};
  for (const t of TEXT_FIELDS[name]) {
    if (sec[t] === undefined && t !== 'name') continue;
    if (typeof sec[t] !== 'string' || sec[t] === '')
      fail(where, `${name}.${t}`, 'must be a non-empty string', `give the ${name}'s ${t}`);
    if (t === 'name') out.name = sec[t];
  }
  for (const [field, kind] of Object.entries(numbers))
    out[field] = checkNumber(where, `${name}.${field}`, sec[field], KINDS[kind], calibrated);
  return out;
}

function checkCalibration(where: string, c: unknown): ProfileCalibration {
  if (!isObject(c))
    fail(where, 'calibration', 'must be an object', 'write { "against": {…}, "residuals": […], "intervals": {…} }');
  checkKeys(where, 'calibration.', c, ['against', 'residuals', 'intervals', 'notIdentified']);
  if (!isObject(c.against))
    fail(where, 'calibration.against', 'must be an object', 'record the server version, flags and GPU the fit ran against');
  if (!Array.isArray(c.residuals)) fail(where, 'calibration.residuals', 'must be an array', 'list one residual per probe');
  if (!isObject(c.intervals))
    fail(where, 'calibration.intervals', 'must be an object', 'give { "<perf field>": { "low": …, "high": … } }');
  for (const [k, iv] of Object.entries(c.intervals)) {
    if (!(k in FIELDS.perf))
      fail(where, `calibration.intervals.${k}`, 'not a perf field', `use one of ${Object.keys(FIELDS.perf).join(', ')}`);
    if (!isObject(iv) || typeof iv.low !== 'number' || typeof iv.high !== 'number' || iv.low > iv.high) {
      fail(
        where,
        `calibration.intervals.${k}`,
        'must be { "low": n, "high": n } with low ≤ high',
        "write the interval in the field's unit",
      );
    }
  }
  return c as unknown as ProfileCalibration;
}

/**
 * Check a parsed profile file and return its `Profile` (plain numbers) with status, notes and calibration.
 * @param where the file name, first in every message.
 * @throws Error `<file>: <field>: <problem>; <fix>` on an unknown field, a missing number, a wrong unit or
 *   an implausible value, or when weights and activations alone exceed the GPU's memory.
 */
export function parseProfileDocument(json: unknown, where: string): ProfileDocument {
  if (!isObject(json)) fail(where, '(top)', 'must be a JSON object', `start from a file under profiles/`);
  checkKeys(where, '', json, TOP_FIELDS);
  if (json.format !== PROFILE_FORMAT)
    fail(where, 'format', `must be "${PROFILE_FORMAT}", got ${JSON.stringify(json.format)}`, `set "format": "${PROFILE_FORMAT}"`);
  if (typeof json.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(json.id)) {
    fail(
      where,
      'id',
      `must be lower-case letters, digits, '.', '_' or '-', got ${JSON.stringify(json.id)}`,
      'use the file name without .json',
    );
  }
  const statuses: readonly unknown[] = PROFILE_STATUSES;
  if (!statuses.includes(json.status))
    fail(
      where,
      'status',
      `must be one of ${PROFILE_STATUSES.map((s) => `"${s}"`).join(', ')}, got ${JSON.stringify(json.status)}`,
      'label what the numbers rest on',
    );
  const calibrated = json.calibration !== undefined;
  if (json.status === 'calibrated' && !calibrated)
    fail(
      where,
      'calibration',
      'missing for status "calibrated"',
      'add the calibration block, or use "spec-derived, not calibrated"',
    );
  const notes = json.notes ?? [];
  if (!Array.isArray(notes) || notes.some((n) => typeof n !== 'string'))
    fail(where, 'notes', 'must be an array of strings', 'write one sentence per entry');
  if (json.description !== undefined && typeof json.description !== 'string')
    fail(where, 'description', 'must be a string', 'describe the pair in one line');
  const profile = {
    id: json.id,
    status: json.status as ProfileStatus,
    gpu: checkSection(where, json, 'gpu', calibrated),
    model: checkSection(where, json, 'model', calibrated),
    perf: checkSection(where, json, 'perf', calibrated),
  } as unknown as ProfileDocument['profile'];
  checkFitsAtAll(where, profile);
  return {
    profile,
    notes: notes as string[],
    ...(typeof json.description === 'string' ? { description: json.description } : {}),
    ...(calibrated ? { calibration: checkCalibration(where, json.calibration) } : {}),
  };
}

/**
 * Weights + activation reserve must leave room on the GPU, or vLLM fails at startup with "No available
 * memory for the cache blocks" (`vllm/v1/core/kv_cache_utils.py` `_check_enough_kv_cache_memory`).
 * Only the hopeless case is refused here; `resolveEngineConfig` checks the room at the flags' utilization.
 */
function checkFitsAtAll(where: string, p: Profile): void {
  const need = p.model.weightsInVramBytes + p.model.activationReserveBytes;
  if (need >= p.gpu.deviceMemoryBytes) {
    const gib = (b: number) => (b / 2 ** 30).toFixed(2);
    fail(
      where,
      'model.weightsInVramBytes',
      `${p.model.name} needs ${gib(need)} GiB for weights and activations but ${p.gpu.name} has ${gib(p.gpu.deviceMemoryBytes)} GiB; ` +
        'vLLM would fail at startup with "No available memory for the cache blocks" (vllm/v1/core/kv_cache_utils.py)',
      'pick a GPU with more memory or a quantised model',
    );
  }
}
