// The console server as a JSON-RPC 2.0 client sees it, through jayson (a dev dependency; the library the original
// console server is built on): an id per call, answers matched by id, a batch as an array. A call resolves with its
// `result` or rejects with a JsonRpcCallError carrying the error object's code and message.

import jayson, { type HttpClient } from 'jayson/promise/index.js';

export class JsonRpcCallError extends Error {
  override readonly name = 'JsonRpcCallError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface JsonRpcCall {
  readonly method: string;
  readonly params?: unknown;
}

/** A settled call of a batch: its result, or its error. */
export type BatchOutcome = { readonly result: unknown } | { readonly error: JsonRpcCallError };

interface Response {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/** The calls go out through jayson's HTTP client (the JSON-RPC library the original console server is built on). */
export class JsonRpcClient {
  private nextId = 1;
  private readonly client: HttpClient;
  constructor(url: string) {
    // jayson parses a URL string into its http.request options.
    this.client = jayson.Client.http(url as never);
  }

  async call<T = unknown>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    const answer = (await this.client.request(method, params as never, id)) as Response;
    return this.settle(answer, id) as T;
  }

  /** Sends the calls as one batch; the outcomes come back in the calls' order, whatever order the server used. */
  async batch(calls: readonly JsonRpcCall[]): Promise<BatchOutcome[]> {
    const ids = calls.map(() => this.nextId++);
    const answers = (await this.client.request(calls.map((call, i) => this.client.request(call.method, call.params as never, ids[i], false)))) as unknown as Response[];
    if (!Array.isArray(answers)) throw new Error(`a batch was answered with ${JSON.stringify(answers)}`);
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    return ids.map((id) => {
      const answer = byId.get(id);
      if (!answer) throw new Error(`no answer for id ${id}`);
      try {
        return { result: this.settle(answer, id) };
      } catch (error) {
        if (error instanceof JsonRpcCallError) return { error };
        throw error;
      }
    });
  }

  private settle(answer: Response, id: number): unknown {
    if (answer.jsonrpc !== '2.0' || answer.id !== id) throw new Error(`not a JSON-RPC 2.0 answer to id ${id}: ${JSON.stringify(answer)}`);
    if (answer.error) throw new JsonRpcCallError(answer.error.code, answer.error.message);
    return answer.result;
  }
}
