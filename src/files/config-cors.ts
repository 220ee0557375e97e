// The browser origins the files service answers (docs/specs/files-node.md §8; docs/notes/files-node.md C-table).
//
// `cors.allowedOrigins` entries: exact origins (`https://app.example.org`), any-depth subdomain wildcards
// (`https://*.example.org`), or `'*'` alone meaning every origin, which is what the original's `cors.origin: '*'`
// did; the admin key travels in a header, never a cookie, and credentials stay disabled.

import { recordAt } from './config-accessors.js';

const MAX_ORIGIN_LENGTH = 255;
const ORIGIN_RULE =
  "must be an exact origin such as 'https://app.example.org', a subdomain wildcard such as 'https://*.example.org', or '*' alone for every origin";

function originProblem(entry: string): string | undefined {
  if (entry.length > MAX_ORIGIN_LENGTH) return `must be at most ${MAX_ORIGIN_LENGTH} characters`;
  const wildcard = /^(https?):\/\/\*\.([^/:?#]+)(?::(\d{1,5}))?$/.exec(entry);
  if (wildcard) {
    const [, scheme, suffix, port] = wildcard as unknown as [string, string, string, string | undefined];
    if (!suffix.includes('.') || suffix.startsWith('.') || suffix.endsWith('.') || suffix.includes('..') || suffix.length > 253) {
      return `'*.${suffix}' needs a registrable suffix such as '*.example.org'`;
    }
    if (port !== undefined && Number(port) > 65535) return 'has a port above 65535';
    try {
      const probe = new URL(`${scheme}://x.${suffix}${port === undefined ? '' : `:${port}`}`);
      if (probe.hostname !== `x.${suffix}`) return ORIGIN_RULE + ' (lowercase, without a path)';
    } catch {
      return ORIGIN_RULE;
    }
    return undefined;
  }
  if (entry.includes('*')) return ORIGIN_RULE;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return ORIGIN_RULE;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${ORIGIN_RULE} (http or https)`;
  // An origin is scheme://host[:port] exactly: no path, query, fragment, credentials or trailing slash.
  if (url.origin !== entry) return `${ORIGIN_RULE}; write it as '${url.origin}' (no path, trailing slash, default port or uppercase)`;
  return undefined;
}

/**
 * `cors.allowedOrigins`, required: the accepted origins without duplicates, or undefined when the list has a
 * problem. The legacy keys of the original (`cors.origin`, `cors.originRegexps`, `cors.credentials`) are ignored
 * with a warning.
 */
export function checkAllowedOrigins(cors: unknown, problems: string[], warnings: string[]): string[] | undefined {
  const block = recordAt(cors);
  for (const legacy of ['origin', 'originRegexps', 'credentials'] as const) {
    if (block[legacy] !== undefined) warnings.push(`cors.${legacy}: ignored (legacy key); cors.allowedOrigins lists the accepted origins`);
  }
  const value = block.allowedOrigins;
  if (value === undefined) {
    problems.push(
      "cors.allowedOrigins: required: a non-empty array of browser origins, e.g. ['https://app.example.org', 'https://*.example.org'], or ['*'] for every origin",
    );
    return undefined;
  }
  if (!Array.isArray(value) || value.length === 0) {
    problems.push('cors.allowedOrigins: must be a non-empty array of origins');
    return undefined;
  }
  let valid = true;
  value.forEach((entry, index) => {
    const path = `cors.allowedOrigins[${index}]`;
    if (typeof entry !== 'string' || entry === '') {
      problems.push(`${path}: must be a non-empty string`);
      valid = false;
    } else if (entry === '*') {
      if (value.length > 1) {
        problems.push(`${path}: '*' (every origin) must be the only entry`);
        valid = false;
      }
    } else {
      const problem = originProblem(entry);
      if (problem !== undefined) {
        problems.push(`${path}: ${problem}`);
        valid = false;
      }
    }
  });
  return valid ? [...new Set(value as string[])] : undefined;
}
