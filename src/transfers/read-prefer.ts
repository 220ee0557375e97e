// The `Prefer` request header as PostgREST reads it for a read (notes B.2; PostgREST ApiRequest/Preferences.hs):
// comma-separated tokens, spaces trimmed, the first token of each kind wins. Only `count=` and `handling=` change
// a read; the other PostgREST preferences are known (not "invalid") but have nothing to apply to a GET.

import { invalidPreferences } from './gateway-errors.js';

export type CountPreference = 'exact' | 'planned' | 'estimated';

export interface ReadPreferences {
  readonly count?: CountPreference;
  readonly handling?: 'strict' | 'lenient';
  /** `Preference-Applied` header value, or undefined when nothing was applied. */
  readonly applied?: string;
}

/** Every preference PostgREST recognises (tx= included: valid even when the server does not honour it). */
const KNOWN = new Set([
  'resolution=merge-duplicates',
  'resolution=ignore-duplicates',
  'return=representation',
  'return=minimal',
  'return=headers-only',
  'params=single-object',
  'count=exact',
  'count=planned',
  'count=estimated',
  'tx=commit',
  'tx=rollback',
  'missing=default',
  'missing=null',
  'handling=strict',
  'handling=lenient',
]);

/**
 * @throws GatewayError PGRST122 when `handling=strict` meets an unknown preference. `timezone=` counts as unknown:
 * PostgREST accepts only names from pg_timezone_names, which this pure code does not have (and does not apply).
 */
export function parsePrefer(header: string | undefined): ReadPreferences {
  // RFC 7240 allows empty list elements; they are skipped rather than reported.
  const tokens = (header ?? '').split(',').map((token) => token.trim()).filter((token) => token !== '');
  const first = <T extends string>(prefix: string, values: readonly T[]): T | undefined => {
    for (const token of tokens) {
      const value = token.startsWith(prefix) ? token.slice(prefix.length) : undefined;
      if (value !== undefined && (values as readonly string[]).includes(value)) return value as T;
    }
    return undefined;
  };
  const count = first<CountPreference>('count=', ['exact', 'planned', 'estimated']);
  const handling = first<'strict' | 'lenient'>('handling=', ['strict', 'lenient']);
  if (handling === 'strict') {
    const invalid = tokens.filter((token) => !KNOWN.has(token) && !token.startsWith('max-affected='));
    if (invalid.length > 0) throw invalidPreferences(invalid);
  }
  // Preference-Applied lists count before handling, as PostgREST's prefAppliedHeader does.
  const applied = [count === undefined ? undefined : `count=${count}`, handling === undefined ? undefined : `handling=${handling}`].filter(
    (value): value is string => value !== undefined,
  );
  return {
    ...(count === undefined ? {} : { count }),
    ...(handling === undefined ? {} : { handling }),
    ...(applied.length === 0 ? {} : { applied: applied.join(', ') }),
  };
}
