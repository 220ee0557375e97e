// Amounts, passphrases, usernames and votes as the console accepts them (notes C.2 "Semantics to carry over"). Pure.

import { ADDRESS_PATTERN } from './crypto.js';
import { DELEGATE_USERNAME, isPassphrase, PUBLIC_KEY, shown, WrongParameterError, wrongParameter } from './params.js';

export { DELEGATE_USERNAME, isPassphrase };

/** 1 ADM = 10^8 sats. */
const SATS_PER_ADM = 100_000_000n;

/**
 * A string containing `ADM` is a decimal ADM amount (at most 8 decimals, converted exactly); anything else must be
 * an integer number of sats. The result must fit a JSON number exactly (a safe integer).
 */
export function parseAmount(value: unknown): number {
  if (typeof value !== 'string' && typeof value !== 'number') throw new WrongParameterError('amount');
  const text = String(value).trim();
  let sats: bigint;
  if (/adm/i.test(text)) {
    const match = /^(\d+)(?:\.(\d{1,8}))?\s*ADM$/i.exec(text);
    if (!match) throw wrongParameter('amount', text);
    sats = BigInt(match[1]!) * SATS_PER_ADM + BigInt((match[2] ?? '').padEnd(8, '0'));
  } else {
    if (!/^\d+$/.test(text)) throw wrongSats(text);
    sats = BigInt(text);
  }
  if (sats > BigInt(Number.MAX_SAFE_INTEGER)) throw new WrongParameterError('amount', 'more than can be sent');
  return Number(sats);
}

/**
 * A value without `ADM` that is not a whole number of sats (`0.001`): the original's "Wrong 'amount' parameter:
 * 0.001", then how to write it, which the original's users asked for (the value itself in ADM when it is a decimal
 * the ADM form takes). A value `shown` hides gets the bare error: the hint would repeat it.
 */
function wrongSats(text: string): WrongParameterError {
  const value = shown(text);
  if (value === undefined) return new WrongParameterError('amount');
  const example = /^\d+\.\d{1,8}$/.test(value) ? `${value}ADM` : '1.5ADM';
  return new WrongParameterError('amount', `${value}. Write a whole number of 1/10^8 ADM units, or a value ending in ADM (${example})`);
}

/**
 * The placeholder passphrase of the packaged config.default.jsonc (the original's too): a config copied by `adm init`
 * and not yet edited holds it. It counts as no passphrase wherever one is read, so it never derives an account.
 */
export const TEMPLATE_PASSPHRASE = 'distance expect praise frequent..';

/** A passphrase someone actually set: not empty, not the template's placeholder. */
export function setPassphrase(value: string | undefined): string | undefined {
  return value && value !== TEMPLATE_PASSPHRASE ? value : undefined;
}

/** notes C.2: a passphrase is a string of more than 30 characters (isPassphrase); its value never appears in the error. */
export function validatePassphrase(value: unknown): string {
  if (!isPassphrase(value) || value === TEMPLATE_PASSPHRASE) throw new WrongParameterError('passphrase');
  return value;
}

/** At most this many votes per transaction. */
export const MAX_VOTES = 33;

export interface Vote {
  readonly sign: '+' | '-';
  /** A 64-hex public key, an address or a delegate name (the last two need resolving); nothing else. */
  readonly target: string;
}

/** Entries without a sign vote for (`+`); at most 33; each names a delegate by public key, address or name. */
export function parseVotes(value: unknown): Vote[] {
  if (!Array.isArray(value) || value.length === 0) throw new WrongParameterError('votes', 'a non-empty list of delegates is needed');
  if (value.length > MAX_VOTES) throw new WrongParameterError('votes', `at most ${MAX_VOTES} votes per transaction`);
  return value.map((entry) => {
    if (typeof entry !== 'string' || entry.trim() === '') throw wrongParameter('votes', entry);
    const text = entry.trim();
    const sign = text[0] === '-' ? '-' : '+';
    const target = text[0] === '+' || text[0] === '-' ? text.slice(1) : text;
    if (!PUBLIC_KEY.test(target) && !ADDRESS_PATTERN.test(target) && !DELEGATE_USERNAME.test(target)) throw wrongParameter('votes', text);
    return { sign, target };
  });
}
