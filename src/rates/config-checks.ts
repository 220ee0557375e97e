// The rules of the rates configuration that a JSON schema cannot express (docs/notes/rates.md E.1, E.2): webhook and
// address formats, the ADAMANT passphrase, source URLs, keys and lists, MOEX pairs, the Binance quote asset.
// They run even when the schema failed, so that every problem is reported at once; messages never echo secrets,
// URLs or webhooks.

import { isRecord } from '../config.js';
import { isPassphrase } from '../console/amount.js';
import { ADDRESS as ADAMANT_ADDRESS } from '../console/params.js';
import { BINANCE_QUOTE_ASSETS, DEFAULT_BINANCE_QUOTE_ASSET } from './config-defaults.js';
import { COIN_PATTERN } from './config-schema.js';
import { secretOf } from './config-secrets.js';
import { fetchableCount, SOURCE_KEY_LIST, SOURCE_KEYS, SOURCE_RULES } from './config-sources.js';

/** The original's refinement text (notes E.1): addresses listed, no usable passphrase (absent, blank or the placeholder). */
export const ADAMANT_PASSPHRASE_MISSING = 'Provide passphrase to use ADAMANT notifier';
/** A passphrase the console would refuse (more than 30 characters, src/console/amount.ts); its value is never echoed. */
export const ADAMANT_PASSPHRASE_INVALID = 'Invalid ADAMANT passphrase: it must be longer than 30 characters (the 12 words of the sending account)';
/** Later upstream documentation's text for `^U[0-9]{6,21}$` (notes E.1); the value is not echoed, it may be a pasted secret. */
export const ADAMANT_ADDRESS_INVALID = 'Invalid ADAMANT address. The format is U followed by 6 to 21 digits';

/** Notification webhook formats of the original (notes E.1); loopback URLs are deliberately not accepted. */
const SLACK_WEBHOOK = /^https:\/\/hooks\.slack\.com\/services\/[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]+$/;
const DISCORD_WEBHOOK = /^https:\/\/discord(app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+$/;

const COIN_RE = new RegExp(COIN_PATTERN);

const stringsOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

function validHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Semantic checks of notes E.1/E.2 that a JSON schema cannot express. Never echoes secrets, URLs or webhooks. */
export function semanticCheck(raw: unknown, problems: string[], warnings: string[]): void {
  if (!isRecord(raw)) return;

  const notify = raw.notify;
  if (isRecord(notify)) {
    // The webhook value is a credential: name its position, never its text.
    stringsOf(notify.slack).forEach((url, index) => {
      if (!SLACK_WEBHOOK.test(url)) {
        problems.push(
          `notify.slack[${index}]: Invalid Slack webhook url. The format is \`https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX\``,
        );
      }
    });
    stringsOf(notify.discord).forEach((url, index) => {
      if (!DISCORD_WEBHOOK.test(url)) {
        problems.push(
          `notify.discord[${index}]: Invalid Discord webhook url. The format is \`https://discord.com/api/webhooks/<id>/<token>\``,
        );
      }
    });
    // notes E.1: addresses need a passphrase (4.2: only a non-empty list does); the placeholder counts as none.
    // The passphrase is a secret and addresses may be mis-pasted ones: problems name positions, never values.
    const addresses = Array.isArray(notify.adamant) ? notify.adamant : [];
    addresses.forEach((address, index) => {
      if (typeof address === 'string' && !ADAMANT_ADDRESS.test(address)) problems.push(`notify.adamant[${index}]: ${ADAMANT_ADDRESS_INVALID}`);
    });
    const passphrase = secretOf(notify.adamantPassphrase);
    if (addresses.length > 0) {
      if (passphrase === undefined) problems.push(`notify.adamantPassphrase: ${ADAMANT_PASSPHRASE_MISSING}`);
      else if (!isPassphrase(passphrase)) problems.push(`notify.adamantPassphrase: ${ADAMANT_PASSPHRASE_INVALID}`);
    } else if (passphrase !== undefined) {
      warnings.push('notify.adamantPassphrase: notify.adamant lists no address; the ADAMANT notification channel stays off');
    }
    stringsOf(notify.adamantNodes).forEach((url, index) => {
      if (!validHttpUrl(url)) problems.push(`notify.adamantNodes[${index}]: must be an http:// or https:// URL`);
    });
  }

  if (isRecord(raw.mappings)) {
    for (const key of Object.keys(raw.mappings)) {
      if (!COIN_RE.test(key)) problems.push(`mappings: key '${key}' is not a valid coin symbol`);
    }
  }

  const known = new Set<string>(Object.keys(SOURCE_KEYS));
  for (const entry of stringsOf(raw.priorities)) {
    if (!known.has(entry)) {
      warnings.push(`priorities: '${entry}' is not a source name (names are case-sensitive: ${[...known].join(', ')}); the entry is inert`);
    }
  }

  for (const key of SOURCE_KEY_LIST) {
    const block = raw[key];
    if (!isRecord(block)) continue;
    const rule = SOURCE_RULES[key];

    if (typeof block.url === 'string' && block.url !== '' && !validHttpUrl(block.url)) {
      problems.push(`${key}.url: must be an http:// or https:// URL`);
    }

    const enabled = block.enabled !== false;
    const hasThings = fetchableCount(block) > 0;
    if (enabled && hasThings) {
      if (rule.keyMessage && secretOf(block.api_key) === undefined) problems.push(`${key}.api_key: ${rule.keyMessage}`);
    } else if (block.enabled === true) {
      problems.push(`${key}.${rule.thingsKey}: Provide at least one ${rule.things} when ${rule.display} is enabled`);
    } else if (enabled) {
      warnings.push(`${key}: configured without any ${rule.things}; ${rule.display} stays inactive`);
    }
  }

  const moex = raw.moex;
  if (isRecord(moex) && isRecord(moex.codes)) {
    for (const pair of Object.keys(moex.codes)) {
      if (!/^[$A-Za-z0-9._-]+\/RUB$/i.test(pair)) problems.push(`moex.codes: '${pair}' must be a pair of the form CODE/RUB`);
    }
  }

  const binance = raw.binance;
  if (isRecord(binance)) {
    const quote = typeof binance.quote_asset === 'string' ? binance.quote_asset.toUpperCase() : DEFAULT_BINANCE_QUOTE_ASSET;
    if (!(BINANCE_QUOTE_ASSETS as readonly string[]).includes(quote)) {
      problems.push(`binance.quote_asset: 'quote_asset' must be a USD-pegged asset: ${BINANCE_QUOTE_ASSETS.join(', ')}`);
    }
    if (stringsOf(binance.coins).some((coin) => coin.toUpperCase() === quote)) {
      problems.push(`binance.coins: Remove '${quote}' from the Binance coins: it is the configured quote asset and has no market against itself`);
    }
  }
}
