// Content negotiation and schema profiles of a read (PostgREST's resource representation and multiple-schema rules;
// its MediaType.hs, Plan/Negotiate.hs and ApiRequest.hs). Pure: header text in, a decision or a GatewayError out.
//
// Media: the Accept header is read as WAI's parseHttpAccept reads it (spaces dropped, `;q=` cut off, sorted by
// quality, then by parameters, then by fewer `*`) and the first type the gateway produces wins:
//
//   application/json, application/vnd.pgrst.array(+json), */*   → a JSON array (the default without Accept)
//   application/vnd.pgrst.array(+json);nulls=stripped            → a JSON array, null-valued keys left out
//   application/vnd.pgrst.object(+json)[;nulls=stripped]         → the one row as an object, else 406 PGRST116
//   text/csv                                                      → CSV, a header line and one line per row
//
// Anything else (application/xml, text/*, application/geo+json without PostGIS…) is 406 PGRST107 naming every type
// asked for. Profiles: GET and HEAD name their schema in Accept-Profile, other verbs in Content-Profile; none means
// the first exposed schema, an unexposed one is 406 PGRST106.

import { GatewayError } from './gateway-errors.js';

export type ReadFormat = 'json' | 'json-stripped' | 'object' | 'object-stripped' | 'csv';

export interface ReadMedia {
  readonly format: ReadFormat;
  /** The response's Content-Type. */
  readonly contentType: string;
}

const MEDIA: Readonly<Record<ReadFormat, ReadMedia>> = {
  json: { format: 'json', contentType: 'application/json; charset=utf-8' },
  'json-stripped': { format: 'json-stripped', contentType: 'application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8' },
  object: { format: 'object', contentType: 'application/vnd.pgrst.object+json; charset=utf-8' },
  'object-stripped': { format: 'object-stripped', contentType: 'application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8' },
  csv: { format: 'csv', contentType: 'text/csv; charset=utf-8' },
};

export const DEFAULT_MEDIA = MEDIA.json;

/** One entry of an Accept header: the media type as sent and its parameters other than q, in order. */
interface AcceptedType {
  readonly type: string;
  readonly parameters: readonly string[];
}

/** Haskell's `reads :: Double` on the q value: a leading number, else 1. */
function quality(text: string): number {
  const match = /^[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/.exec(text);
  return match ? Number(match[0]) : 1;
}

/** The Accept header's media types, best first (WAI parseHttpAccept's order; a stable sort keeps ties in order). */
export function parseAccept(header: string): AcceptedType[] {
  const entries = header.split(',').map((raw, index) => {
    const compact = raw.replaceAll(' ', '');
    const cut = compact.indexOf(';q=');
    const media = cut < 0 ? compact : compact.slice(0, cut);
    const q = cut < 0 ? 1 : quality(compact.slice(cut + 3).split(';')[0]!);
    const [type = '', ...parameters] = media.split(';');
    const semicolons = media.split(';').length - 1;
    const stars = media.split('*').length - 1;
    return { accepted: { type, parameters: parameters.filter((p) => p !== '') }, q, semicolons, stars, index };
  });
  entries.sort((a, b) => b.q - a.q || b.semicolons - a.semicolons || a.stars - b.stars || a.index - b.index);
  return entries.map((entry) => entry.accepted);
}

const stripped = (parameters: readonly string[]) => parameters.length === 1 && parameters[0]!.toLowerCase() === 'nulls=stripped';

/** What the gateway would produce for one accepted type, undefined when it cannot. */
function produced({ type, parameters }: AcceptedType): ReadMedia | undefined {
  switch (type.toLowerCase()) {
    case '':
    case '*/*':
    case 'application/json':
      return MEDIA.json;
    case 'application/vnd.pgrst.array+json':
    case 'application/vnd.pgrst.array':
      return stripped(parameters) ? MEDIA['json-stripped'] : MEDIA.json;
    case 'application/vnd.pgrst.object+json':
    case 'application/vnd.pgrst.object':
      return stripped(parameters) ? MEDIA['object-stripped'] : MEDIA.object;
    case 'text/csv':
      return MEDIA.csv;
    default:
      return undefined;
  }
}

/** PGRST107: nothing the client accepts can be produced. */
export function mediaNotAvailable(accepted: readonly string[]): GatewayError {
  return new GatewayError({ status: 406, code: 'PGRST107', message: `None of these media types are available: ${accepted.join(', ')}` });
}

/** The representation of a read; no Accept header (or an empty one) is `*` / JSON. */
export function negotiateMedia(accept: string | undefined): ReadMedia {
  if (accept === undefined || accept.trim() === '') return DEFAULT_MEDIA;
  const accepted = parseAccept(accept);
  for (const entry of accepted) {
    const media = produced(entry);
    if (media) return media;
  }
  // Every entry is named as sent (PostgREST's toMime of a type it does not know is its text).
  throw mediaNotAvailable(accepted.map((entry) => entry.type));
}

/** PGRST116: the object representation needs exactly one row. */
export function notSingular(rows: bigint): GatewayError {
  return new GatewayError({ status: 406, code: 'PGRST116', message: 'Cannot coerce the result to a single JSON object', details: `The result contains ${rows} rows` });
}

/** PGRST106: the profile header names a schema that is not exposed. */
export function schemaNotExposed(schema: string, exposed: readonly string[]): GatewayError {
  return new GatewayError({ status: 406, code: 'PGRST106', message: `Invalid schema: ${schema}`, hint: `Only the following schemas are exposed: ${exposed.join(', ')}` });
}

/**
 * The schema a request reads: Accept-Profile for GET and HEAD, Content-Profile for every other verb (PostgREST reads
 * the profile the same way for OPTIONS and the write verbs it refuses), else the first exposed schema.
 */
export function negotiateSchema(method: string, headers: { readonly 'accept-profile'?: string; readonly 'content-profile'?: string }, exposed: readonly string[]): string {
  const read = method === 'GET' || method === 'HEAD';
  const named = read ? headers['accept-profile'] : headers['content-profile'];
  if (named === undefined) return exposed[0]!;
  if (!exposed.includes(named)) throw schemaNotExposed(named, exposed);
  return named;
}
