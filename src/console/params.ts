// Parameter handling shared by the console's methods (notes C.2): required parameters with the original's error
// text, the shapes of addresses, ids, heights and delegate names (checked before any node is asked), node answers
// that report failure, and the delegate lookup key. Pure.
//
// Errors repeat a wrong value only when it is safe to (`shown`): never a value the console's passphrase rule accepts
// (more than 30 characters), never one with spaces or control characters (a short passphrase is words too). Where the
// original checked nothing, a value still reaches a node only when it is plain text (`plainParam`): a passphrase is
// words, so the passphrase rule wins over the original's leniency.

import { ADDRESS_PATTERN } from './crypto.js';

/** A required parameter is missing (the original's requiredParam: "Missing parameter '<name>'"). */
export class MissingParameterError extends Error {
  override readonly name = 'MissingParameterError';
  constructor(parameter: string) {
    super(`Missing parameter '${parameter}'`);
  }
}

/** A parameter is present but unusable ("Wrong '<name>' parameter…", the original's wording). */
export class WrongParameterError extends Error {
  override readonly name = 'WrongParameterError';
  constructor(parameter: string, detail?: string) {
    super(`Wrong '${parameter}' parameter${detail ? `: ${detail}` : ''}`);
  }
}

/** The node answered `{success: false, …}`: its error becomes the JSON-RPC 501 message (notes F.12). */
export class NodeRefusedError extends Error {
  override readonly name = 'NodeRefusedError';
}

/** The console's rule for a passphrase: a string of more than 30 characters (notes C.2). */
export function isPassphrase(value: unknown): value is string {
  return typeof value === 'string' && value.length > 30;
}

/** Printable ASCII without spaces: what an error may repeat, and what a value the original never checked may be. */
const PLAIN_TEXT = /^[\x21-\x7e]+$/;

/** The value as an error may repeat it, or undefined when it must not appear (see the header). */
export function shown(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value);
  return !isPassphrase(text) && PLAIN_TEXT.test(text) ? text : undefined;
}

/** "Wrong '<name>' parameter", followed by the value only when `shown` allows it. */
export function wrongParameter(name: string, value: unknown): WrongParameterError {
  return new WrongParameterError(name, shown(value));
}

export function required(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '') throw new MissingParameterError(name);
  if (typeof value !== 'string' && typeof value !== 'number') throw new WrongParameterError(name, 'must be a string');
  return String(value);
}

/** The original's loose address shape (the rates config checks `notify.adamant` with it). */
export const ADDRESS = /^U\d{6,21}$/;
export const PUBLIC_KEY = /^[0-9a-f]{64}$/i;
/** Block and transaction ids: a decimal uint64 (notes D "Transaction id"). */
export const NUMERIC_ID = /^\d{1,20}$/;
/** Block heights: a non-negative safe integer. */
export const HEIGHT = /^\d{1,15}$/;
/** Delegate usernames as the node registers them (notes C.2). */
export const DELEGATE_USERNAME = /^[a-z0-9!@$&_]{1,20}$/;

function matching(pattern: RegExp, value: unknown, name: string): string {
  const text = required(value, name);
  if (!pattern.test(text)) throw wrongParameter(name, text);
  return text;
}

/** An ADAMANT address: `U` and the decimal uint64 (notes D "Address"). */
export const addressParam = (value: unknown, name = 'address'): string => matching(ADDRESS_PATTERN, value, name);
export const idParam = (value: unknown, name = 'id'): string => matching(NUMERIC_ID, value, name);
export const heightParam = (value: unknown, name = 'height'): string => matching(HEIGHT, value, name);
export const usernameParam = (value: unknown, name = 'username'): string => matching(DELEGATE_USERNAME, value, name);
/** A value the original sent as it was: any plain text, so never a passphrase (see the header). */
export const plainParam = (value: unknown, name: string): string => matching(PLAIN_TEXT, value, name);

/** The named field of a node answer, or NodeRefusedError when the node reported a failure. */
export function field<T = unknown>(answer: unknown, name: string): T {
  const body = (answer ?? {}) as Record<string, unknown>;
  if (body.success === false) throw new NodeRefusedError(String(body.errorMessage ?? body.error ?? 'the node refused the request'));
  return body[name] as T;
}

/** The answer without its envelope keys (nodeStatus, nodeVersion: notes F.12). */
export function withoutEnvelope(answer: unknown): Record<string, unknown> {
  const body = (answer ?? {}) as Record<string, unknown>;
  if (body.success === false) throw new NodeRefusedError(String(body.errorMessage ?? body.error ?? 'the node refused the request'));
  const { success: _success, nodeTimestamp: _time, ...rest } = body;
  return rest;
}

export type DelegateLookup = { readonly key: 'username' | 'publicKey' | 'address'; readonly value: string };

const LOOKUP_KEYS: ReadonlySet<unknown> = new Set(['username', 'publicKey', 'address']);

/**
 * getDelegate's lookup key (notes C.2, v3): given, else inferred from the identifier's shape (an address, a 64-hex
 * public key, else a username). As in the original only the key is checked, in its words; the identifier is sent as
 * it is when it is plain text (`["acc_delegate_one", "address"]` asks `delegates/get?address=acc_delegate_one`).
 */
export function delegateLookup(identifier: string, key?: unknown): DelegateLookup {
  const given = key === undefined || key === null || key === '' ? undefined : key;
  if (given !== undefined && !LOOKUP_KEYS.has(given)) {
    const named = shown(given);
    throw new Error(`Invalid delegate lookup key${named === undefined ? '' : ` '${named}'`}. Use username, publicKey, or address`);
  }
  const lookup = (given as DelegateLookup['key'] | undefined) ?? (ADDRESS_PATTERN.test(identifier) ? 'address' : PUBLIC_KEY.test(identifier) ? 'publicKey' : 'username');
  return { key: lookup, value: plainParam(identifier, lookup) };
}
