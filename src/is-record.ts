// The one "is this a JSON object" check (not null, not an array), for configuration files, persisted state and
// answers from other processes alike.

/** A loose JSON object: a configuration section before validation, a decoded answer before it is checked. */
export type Loose = Record<string, unknown>;

export const isRecord = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);
