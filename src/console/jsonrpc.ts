// The JSON-RPC 2.0 envelope of the console server (spec B §4.2, §7; notes C.1, F.11): request validation, batches,
// notifications, the original's two calling conventions and its error mapping. Pure: the methods are handed in.
//
// - A request needs `jsonrpc: "2.0"`, a string `method`, `params` absent/array/object and `id` absent/string/
//   number/null; anything else is -32600 with id null (jayson's rule). An unknown method is -32601.
// - Array-style methods (`callWithArgs` of the original): params that are not an array, omitted included, give the
//   RESULT `{success:false, error:'"params" parameter should be an array'}` (spec B §7), not an error.
// - Object-style methods (`callWithTemplate`): named params; array params reach the method as an empty object, so
//   it fails with its own "Missing parameter" error, as the original did.
// - A method that throws becomes `{code: 501, message: "Error: <message>"}` (the original's String(error)).
// - Notifications (no id, or id null) are run and get no answer; a batch of only notifications answers nothing
//   (HTTP 204 at the edge); an empty batch is -32600.

import type { Cancellation } from '../cancellation.js';

export type JsonRpcId = string | number | null;
export type ParamsStyle = 'array' | 'object';

export interface RpcMethod {
  readonly style: ParamsStyle;
  /** Resolves with the result (undefined becomes null); throws for a 501 error. */
  readonly call: (params: readonly unknown[] | Readonly<Record<string, unknown>>, signal: Cancellation) => Promise<unknown>;
}

export type MethodTable = ReadonlyMap<string, RpcMethod>;

export interface JsonRpcError {
  readonly code: number;
  readonly message: string;
}

export type JsonRpcResponse = { jsonrpc: '2.0'; id: JsonRpcId; result: unknown } | { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcError };

export const PARSE_ERROR: JsonRpcError = { code: -32700, message: 'Parse error' };
export const INVALID_REQUEST: JsonRpcError = { code: -32600, message: 'Invalid request' };
export const METHOD_NOT_FOUND: JsonRpcError = { code: -32601, message: 'Method not found' };
/** The code every thrown method error maps to (notes C.1, F.11). */
export const METHOD_ERROR_CODE = 501;

/** spec B §7: the exact text, with the quoted word params. */
export const PARAMS_NOT_ARRAY = Object.freeze({ success: false, error: '"params" parameter should be an array' });

/** A batch larger than this is refused as a whole (-32600): bounded work per request (notes F.13 allows 100). */
export const MAX_BATCH = 100;

/** The answer to one HTTP body: JSON to send, or nothing (only notifications). */
export type BodyAnswer = { readonly kind: 'json'; readonly status: number; readonly body: unknown } | { readonly kind: 'empty' };

/**
 * Parses and runs one HTTP body. `describeError` turns a thrown value into its message, with any secret of the parsed
 * body removed (it is called only for errors, so a body is searched for secrets only then).
 */
export async function answerBody(
  text: string,
  methods: MethodTable,
  signal: Cancellation,
  describeError: (error: unknown, body: unknown) => string,
): Promise<BodyAnswer> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // notes F.11: HTTP 400 with a JSON-RPC body (the original sent plain text; this satisfies both readings).
    return { kind: 'json', status: 400, body: errorResponse(null, PARSE_ERROR) };
  }
  const describe = (error: unknown) => describeError(error, parsed);
  if (Array.isArray(parsed)) {
    if (parsed.length === 0 || parsed.length > MAX_BATCH) return { kind: 'json', status: 200, body: errorResponse(null, INVALID_REQUEST) };
    const answers = await Promise.all(parsed.map((request) => answerOne(request, methods, signal, describe)));
    const present = answers.filter((answer): answer is JsonRpcResponse => answer !== undefined);
    return present.length === 0 ? { kind: 'empty' } : { kind: 'json', status: 200, body: present };
  }
  const answer = await answerOne(parsed, methods, signal, describe);
  return answer === undefined ? { kind: 'empty' } : { kind: 'json', status: 200, body: answer };
}

interface ValidRequest {
  readonly method: string;
  readonly params: readonly unknown[] | Readonly<Record<string, unknown>> | undefined;
  readonly id: JsonRpcId;
  readonly notification: boolean;
}

function validate(request: unknown): ValidRequest | undefined {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return undefined;
  const { jsonrpc, method, params, id } = request as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null)) return undefined;
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') return undefined;
  return { method, params: params as ValidRequest['params'], id: (id as JsonRpcId | undefined) ?? null, notification: id === undefined || id === null };
}

async function answerOne(request: unknown, methods: MethodTable, signal: Cancellation, describeError: (error: unknown) => string): Promise<JsonRpcResponse | undefined> {
  const valid = validate(request);
  if (!valid) return errorResponse(null, INVALID_REQUEST);
  const answer = await run(valid, methods, signal, describeError);
  return valid.notification ? undefined : answer;
}

async function run(request: ValidRequest, methods: MethodTable, signal: Cancellation, describeError: (error: unknown) => string): Promise<JsonRpcResponse> {
  const method = methods.get(request.method);
  if (!method) return errorResponse(request.id, METHOD_NOT_FOUND);
  let params: readonly unknown[] | Readonly<Record<string, unknown>>;
  if (method.style === 'array') {
    if (!Array.isArray(request.params)) return { jsonrpc: '2.0', id: request.id, result: PARAMS_NOT_ARRAY };
    params = request.params;
  } else {
    params = request.params === undefined || Array.isArray(request.params) ? {} : request.params;
  }
  try {
    const result = await method.call(params, signal);
    return { jsonrpc: '2.0', id: request.id, result: result === undefined ? null : result };
  } catch (error) {
    return errorResponse(request.id, { code: METHOD_ERROR_CODE, message: `Error: ${describeError(error)}` });
  }
}

function errorResponse(id: JsonRpcId, error: JsonRpcError): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error };
}
