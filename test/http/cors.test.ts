// The CORS policy of a listener (http/cors.ts): which origins match, and the headers of answers and preflights.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CorsPolicy, type CorsOptions } from '../../http/cors.js';

const base: Omit<CorsOptions, 'allowedOrigins'> = {
  methods: ['GET', 'POST'],
  allowHeaders: ['content-type', 'x-api-key'],
  exposeHeaders: ['content-disposition', 'etag'],
  maxAgeSeconds: 600,
};
const policy = (allowedOrigins: string[]) => new CorsPolicy({ ...base, allowedOrigins });
const asObject = (headers: ReadonlyArray<readonly [string, string]>) => Object.fromEntries(headers);

test('exact origins match exactly: scheme, host and port', () => {
  const cors = policy(['https://app.example.org', 'http://127.0.0.1:8080']);
  assert.ok(cors.allows('https://app.example.org'));
  assert.ok(cors.allows('http://127.0.0.1:8080'));
  for (const origin of ['http://app.example.org', 'https://app.example.org:8443', 'https://app.example.org.evil.test', 'https://evil.test', 'http://127.0.0.1:8081', 'null', '']) {
    assert.equal(cors.allows(origin), false, origin);
  }
});

test('a subdomain wildcard matches any depth of subdomain, never the bare domain or a look-alike', () => {
  const cors = policy(['https://*.example.org']);
  for (const origin of ['https://a.example.org', 'https://a.b.example.org', 'https://msg-1.example.org']) assert.ok(cors.allows(origin), origin);
  for (const origin of [
    'https://example.org',
    'http://a.example.org',
    'https://a.example.org:444',
    'https://aexample.org',
    'https://evil.test/.example.org',
    'https://a.example.org.evil.test',
    'https://.example.org',
    'https://a..example.org',
  ]) {
    assert.equal(cors.allows(origin), false, origin);
  }
});

test("'*' allows every origin and answers '*' without Vary", () => {
  const cors = policy(['*']);
  assert.ok(cors.allows('https://anything.test'));
  const headers = asObject(cors.answerHeaders('https://anything.test'));
  assert.equal(headers['access-control-allow-origin'], '*');
  assert.equal(headers.vary, undefined);
  assert.equal(headers['access-control-expose-headers'], 'content-disposition, etag');
});

test('answers echo an allowed origin with Vary: Origin; a refused or missing origin gets no CORS header', () => {
  const cors = policy(['https://app.example.org']);
  assert.deepEqual(asObject(cors.answerHeaders('https://app.example.org')), {
    'access-control-allow-origin': 'https://app.example.org',
    vary: 'Origin',
    'access-control-expose-headers': 'content-disposition, etag',
  });
  assert.deepEqual(cors.answerHeaders('https://evil.test'), []);
  assert.deepEqual(cors.answerHeaders(''), []);
});

test('preflights allow the configured methods and headers for 600 s, and never credentials', () => {
  const headers = asObject(policy(['https://app.example.org']).preflightHeaders('https://app.example.org'));
  assert.deepEqual(headers, {
    'access-control-allow-origin': 'https://app.example.org',
    vary: 'Origin',
    'access-control-allow-methods': 'GET, POST',
    'access-control-allow-headers': 'content-type, x-api-key',
    'access-control-max-age': '600',
  });
  assert.ok(!('access-control-allow-credentials' in headers));
  assert.deepEqual(policy(['https://app.example.org']).preflightHeaders('https://evil.test'), []);
});
