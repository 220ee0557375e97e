// Parameter handling shared by the console's methods (notes C.2): required parameters with the original's error
// text, the shapes of addresses, ids, heights, public keys and delegate names (checked before any node is asked),
// node answers that report failure, and the delegate lookup key. Pure.
//
// Errors repeat a wrong value only when it is safe to (`shown`): never a value the console's passphrase rule accepts
// (more than 30 characters), never one with spaces or control characters (a short passphrase is words too).

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

/** Printable ASCII without spaces: what an error may repeat, and what an unchecked query value may be. */
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

/** The original's loose address shape, used to infer a delegate lookup key (and by the rates config). */
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
export const publicKeyParam = (value: unknown, name = 'publicKey'): string => matching(PUBLIC_KEY, value, name);
export const usernameParam = (value: unknown, name = 'username'): string => matching(DELEGATE_USERNAME, value, name);

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

/**
 * getDelegate's lookup key (notes C.2, v3): given, else inferred from the identifier's shape (an address, a 64-hex
 * public key, else a username). The identifier must have the shape of its key: nothing else is sent to the node.
 */
export function delegateLookup(identifier: string, key?: unknown): DelegateLookup {
  if (key !== undefined && key !== null && key !== '') {
    if (key !== 'username' && key !== 'publicKey' && key !== 'address') {
      const named = shown(key);
      throw new Error(`Invalid delegate lookup key${named === undefined ? '' : ` '${named}'`}: use username, publicKey or address`);
    }
    const check = key === 'address' ? addressParam : key === 'publicKey' ? publicKeyParam : usernameParam;
    return { key, value: check(identifier, key) };
  }
  if (ADDRESS_PATTERN.test(identifier)) return { key: 'address', value: identifier };
  if (PUBLIC_KEY.test(identifier)) return { key: 'publicKey', value: identifier };
  return { key: 'username', value: usernameParam(identifier) };
}
