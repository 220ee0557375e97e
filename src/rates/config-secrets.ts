// Credentials in the rates configuration (API keys, the ADAMANT passphrase): a shipped placeholder counts as no
// credential (docs/notes/rates.md E.2).

/**
 * Placeholders shipped in templates (4.2, 4.1 and the v1 service) that mean "no credential": a copied
 * template with `enabled: true` must fail at startup, not 401 on every cycle (notes E.2).
 * Compared case-insensitively after trimming.
 */
const PLACEHOLDER_SECRETS = new Set(
  [
    'API key for ExchangeRate',
    'API key for ExchangeRate.',
    'API key for CoinMarketCap',
    'API key for CoinDesk Data (CryptoCompare)',
    'Demo API key for CoinGecko',
    'apple banana...',
    'API key for CryptoCompare',
    'Put yours CoinMarketCap API key',
    'Put yours CryptoCompare API key',
    'No need for CoinGecko API key',
  ].map((text) => text.toLowerCase()),
);

/** A configured secret that is empty, whitespace or a shipped placeholder counts as absent (notes E.2). */
export function isPlaceholderSecret(value: string): boolean {
  const trimmed = value.trim();
  return trimmed === '' || PLACEHOLDER_SECRETS.has(trimmed.toLowerCase());
}

/** The configured secret, trimmed; undefined when it is absent, not a string, blank or a placeholder. */
export const secretOf = (value: unknown): string | undefined =>
  typeof value === 'string' && !isPlaceholderSecret(value) ? value.trim() : undefined;
