// The files service's admin API key (docs/specs/files-node.md §5.3, §5.4; docs/notes/files-node.md A.10).

/**
 * Placeholders shipped in upstream templates and docs (notes A.10); compared case-insensitively after
 * trimming. A copied template must fail at startup instead of protecting the admin routes with a public text.
 */
const PLACEHOLDER_KEYS = new Set(
  ['change-me-use-openssl-rand-hex-32', 'replace-with-output-of-openssl-rand-hex-32', 'your-generated-key-here'].map((key) => key.toLowerCase()),
);
export const ADMIN_KEY_MIN_LENGTH = 32;
/** A "unique secret" (spec §5.4) is random: 32 characters drawn from fewer than 8 symbols are not. */
const ADMIN_KEY_MIN_DISTINCT = 8;

/** `adminApiKey`: empty (the administrative routes answer 503, spec §5.3) or a unique secret, never a template's placeholder. */
export function checkAdminApiKey(value: unknown, problems: string[]): void {
  // Messages never echo the key.
  if (typeof value !== 'string' || value === '') return;
  if (PLACEHOLDER_KEYS.has(value.trim().toLowerCase())) {
    problems.push('adminApiKey: is a documentation placeholder, not a secret; generate one with `openssl rand -hex 32` (or leave it empty)');
    return;
  }
  if (value.length < ADMIN_KEY_MIN_LENGTH) {
    problems.push(`adminApiKey: must be an empty value or a unique secret of at least ${ADMIN_KEY_MIN_LENGTH} characters`);
    return;
  }
  if (value.trim() !== value) {
    problems.push('adminApiKey: must not start or end with whitespace (HTTP trims header values, so it could never match)');
    return;
  }
  if (new Set(value).size < ADMIN_KEY_MIN_DISTINCT) {
    problems.push('adminApiKey: is not a unique secret (too few distinct characters); generate one with `openssl rand -hex 32`');
  }
}
