// A JSON-RPC 2.0 client over HTTP, as any client of the console server speaks it (jsonrpc.org/specification):
// POST with Content-Type application/json, an id per call, answers matched by id, a batch as an array. A call
// resolves with its `result` or rejects with a JsonRpcCallError carrying the error object's code and message.
// Written for the tests: the project has no JSON-RPC client dependency.

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

export class JsonRpcClient {
  private nextId = 1;
  constructor(private readonly url: string) {}

  async call<T = unknown>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    const answer = (await this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), id })) as Response;
    return this.settle(answer, id) as T;
  }

  /** Sends the calls as one batch; the outcomes come back in the calls' order, whatever order the server used. */
  async batch(calls: readonly JsonRpcCall[]): Promise<BatchOutcome[]> {
    const ids = calls.map(() => this.nextId++);
    const answers = (await this.send(calls.map((call, i) => ({ jsonrpc: '2.0', method: call.method, ...(call.params === undefined ? {} : { params: call.params }), id: ids[i] })))) as Response[];
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

  private async send(body: unknown): Promise<unknown> {
    const response = await fetch(this.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    return response.json();
  }
}
