// Parameter handling shared by the console's methods (notes C.2): required parameters with the original's error
// text, "k=v" query items, node answers that report failure, and the delegate lookup key. Pure.

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

export function required(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '') throw new MissingParameterError(name);
  if (typeof value !== 'string' && typeof value !== 'number') throw new WrongParameterError(name, 'must be a string');
  return String(value);
}

/** "k=v" items; commas split items too; `and:`/`or:` prefixes stay part of the key (the node groups by them). */
export function queryItems(items: readonly unknown[]): URLSearchParams {
  return new URLSearchParams(items.map((item) => String(item)).join('&').replace(/,/g, '&'));
}

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

export const ADDRESS = /^U\d{6,21}$/;
export const PUBLIC_KEY = /^[0-9a-f]{64}$/i;

/** getDelegate's lookup key (notes C.2, v3): given, else inferred from the identifier's shape. */
export function delegateLookup(identifier: string, key?: unknown): { key: 'username' | 'publicKey' | 'address'; value: string } {
  if (key !== undefined && key !== null && key !== '') {
    if (key !== 'username' && key !== 'publicKey' && key !== 'address') throw new Error(`Invalid delegate lookup key '${String(key)}': use username, publicKey or address`);
    return { key, value: identifier };
  }
  if (ADDRESS.test(identifier)) return { key: 'address', value: identifier };
  if (PUBLIC_KEY.test(identifier)) return { key: 'publicKey', value: identifier };
  return { key: 'username', value: identifier };
}
