// The transfers settings as text, before they mean anything (notes A.4): the file's values under the environment's,
// which win (as PostgREST's do), and typed reads of them that report every problem at once instead of stopping at
// the first.

import { isRecord, schemaProblems } from '../config.js';
import { POSTGREST_FILE_KEYS, SETTING_KEYS, TransfersFileSchema, type SettingKey } from './config-schema.js';

export type MergedSettings = { ok: true; raw: ReadonlyMap<SettingKey, string> } | { ok: false; problems: string[] };

/**
 * The file (may be undefined) merged under the environment, every value as text. Empty strings count as unset, as in a
 * shell; environment values are trimmed. A file of the wrong shape is reported alone (its keys cannot be read).
 */
export function mergeSettings(file: unknown, env: Readonly<Record<string, string | undefined>>): MergedSettings {
  const raw = new Map<SettingKey, string>();
  if (file !== undefined) {
    if (!isRecord(file)) return { ok: false, problems: ['(root): must be an object of settings'] };
    const shape = schemaProblems(TransfersFileSchema, file);
    if (shape.length > 0) return { ok: false, problems: shape };
    for (const [key, value] of Object.entries(file)) {
      if (value === null || value === undefined || value === '') continue;
      const name = POSTGREST_FILE_KEYS[key] ?? (key as SettingKey);
      raw.set(name, String(value));
    }
  }
  for (const key of SETTING_KEYS) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') raw.set(key, value.trim());
  }
  return { ok: true, raw };
}

/** Typed reads of the merged settings: a refused value adds one problem to `problems` and reads as the fallback. */
export class SettingsReader {
  constructor(
    readonly raw: ReadonlyMap<SettingKey, string>,
    readonly problems: string[],
  ) {}

  text(key: SettingKey): string | undefined {
    return this.raw.get(key);
  }

  has(key: SettingKey): boolean {
    return this.raw.has(key);
  }

  integer(key: SettingKey, fallback: number, min: number): number {
    const text = this.raw.get(key);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min) {
      this.problems.push(`${key}: must be an integer ≥ ${min}, got '${text}'`);
      return fallback;
    }
    return value;
  }

  /** Undefined when unset; a refused value reads as `min`. */
  optionalInteger(key: SettingKey, min: number): number | undefined {
    return this.raw.has(key) ? this.integer(key, min, min) : undefined;
  }

  /** true/1/on/yes or false/0/off/no, any case; undefined when unset or refused. */
  flag(key: SettingKey): boolean | undefined {
    const text = this.raw.get(key)?.toLowerCase();
    if (text === undefined) return undefined;
    if (['true', '1', 'on', 'yes'].includes(text)) return true;
    if (['false', '0', 'off', 'no'].includes(text)) return false;
    this.problems.push(`${key}: must be true or false, got '${this.raw.get(key)}'`);
    return undefined;
  }
}
