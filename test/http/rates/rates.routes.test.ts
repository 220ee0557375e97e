// The rates read API over HTTP (docs/specs/rates.md §2.1, §7): the real listener in front of a runtime without sources.
// Bad percent-encoding anywhere in a request is the service's own 4xx `{success:false,date,msg}` or an ordinary
// answer, never a 500 (issue 15).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createActor, fromCallback, type EventObject } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { RATES_HISTORY_ID } from '../../../actors/rates/ids.js';
import { createRuntime } from '../../../actors/runtime.js';
import { ratesServer } from '../../../http/rates/rates.routes.js';
import type { HttpServer } from '../../../http/server.js';
import type { Reply } from '../../../src/reply.js';
import { captureLogger } from '../../support/logger.js';
import { rawRequest } from '../../support/raw-http.js';

let server: HttpServer;
let port: number;
const history = createActor(fromCallback<EventObject & { reply?: Reply<unknown[]> }>(({ receive }) => receive((event) => event.reply?.resolve([]))));

before(async () => {
  const runtime = createRuntime(systemClock, captureLogger().logger);
  history.start();
  // A history store with no snapshots: /getHistory answers its empty list.
  runtime.registry.register(RATES_HISTORY_ID, history);
  server = ratesServer(runtime, { host: '127.0.0.1', port: 0 });
  port = await server.listen();
});
after(async () => {
  await server?.close();
  history.stop();
});

test('bad percent-encoding in the path or the query: 400 or 404 {success:false,date,msg}, never a 500 (issue 15)', async () => {
  // Queries decode as the original's parser did (URLSearchParams semantics: a malformed escape stays literal, bad
  // UTF-8 is U+FFFD), so the junk reaches validation as text and is refused by it like any other bad value.
  const cases: ReadonlyArray<{ target: string; status: number; msg?: string }> = [
    { target: '/get?coin=%zz', status: 400, msg: 'Invalid coin name list' },
    { target: '/get?coin=%FF%FE', status: 400, msg: 'Invalid coin name list' },
    { target: '/get?coin=BTC,%E0%A4%A', status: 400, msg: 'Invalid coin name list' },
    { target: '/get?rateLifetime=%zz', status: 400, msg: 'Invalid input: expected number, received NaN' },
    { target: '/get?rateLifetime=1%', status: 400 },
    { target: '/get?%zz', status: 400, msg: 'Unrecognized key: "%zz"' },
    { target: '/get?%FF=1', status: 400 },
    { target: '/getHistory?from=%zz', status: 400 },
    { target: '/getHistory?coin=%FF', status: 400 },
    { target: '/getHistory?limit=%E0%A4%A', status: 400 },
    { target: '/getHistory?timestamp=%', status: 400 },
    { target: '/status?%zz=%FF', status: 400, msg: 'Unrecognized key: "%zz"' },
    { target: '/%zz', status: 404, msg: 'Not found' },
    { target: '/get%FF%FE', status: 404, msg: 'Not found' },
    { target: '/%E0%A4%A?coin=%zz', status: 404, msg: 'Not found' },
    // Valid escapes still decode.
    { target: '/get?coin=BT%43', status: 200 },
    { target: '/getHistory?coin=BT%43&limit=%31', status: 200 },
  ];
  for (const { target, status, msg } of cases) {
    const answer = await rawRequest(port, 'GET', target);
    const label = `GET ${target}: ${answer.status} ${answer.body}`;
    assert.equal(answer.status, status, label);
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    if (status === 200) {
      assert.equal(body.success, true, label);
      continue;
    }
    assert.deepEqual(Object.keys(body), ['success', 'date', 'msg'], label);
    assert.equal(body.success, false, label);
    assert.equal(typeof body.date, 'number', label);
    if (msg !== undefined) assert.equal(body.msg, msg, label);
  }
});

test('/get answers written into one prepared body: every answer whole and dated when it was made, also 200 at once', async () => {
  const started = Date.now();
  const bodies = await Promise.all(Array.from({ length: 200 }, () => fetch(`http://127.0.0.1:${port}/get`).then((response) => response.text())));
  const finished = Date.now();
  for (const body of bodies) {
    const answer = JSON.parse(body) as { success: boolean; date: number; result: unknown; version: string };
    assert.equal(answer.success, true);
    assert.ok(answer.date >= started && answer.date <= finished, `date ${answer.date} outside ${started}..${finished}`);
    assert.deepEqual(answer.result, {});
    assert.equal(answer.version, '4.2.0');
  }
  const first = (await (await fetch(`http://127.0.0.1:${port}/get`)).json()) as { date: number };
  await new Promise((resolve) => setTimeout(resolve, 5));
  const second = (await (await fetch(`http://127.0.0.1:${port}/get`)).json()) as { date: number };
  assert.ok(second.date > first.date, 'each answer carries its own date');
});
