// Defensive accessors of the files configuration's checks: they run even when the schema failed, so that every
// problem is reported at once; a value of the wrong type counts as absent (its type problem is already reported).

import { isRecord, type Loose } from '../config.js';

export { isRecord, type Loose };
export const recordAt = (value: unknown): Loose => (isRecord(value) ? value : {});
export const intAt = (value: unknown): number | undefined => (Number.isSafeInteger(value) ? (value as number) : undefined);
export const boolAt = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);
export const textAt = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
export const stringsAt = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string' && entry !== '') ? (value as string[]) : undefined;
