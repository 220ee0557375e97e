// Route matching of the node:http engine (http/router.ts) follows uWS's rules, so one route table means the same on
// either engine.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Router } from '../../http/router.js';

function table(): Router<string> {
  const router = new Router<string>();
  router.add('get', '/', 'root');
  router.add('get', '/api/file/:cid', 'download');
  router.add('get', '/api/file/:cid/status', 'status');
  router.add('post', '/api/file/upload', 'upload');
  router.add('get', '/:relation', 'relation');
  router.add('any', '/:relation', 'relation any');
  router.add('options', '/*', 'preflight');
  router.add('post', '/rpc/*', 'rpc');
  router.add('any', '/*', 'not found');
  return router;
}

test('static segments win over parameters, parameters over wildcards, a method over any', () => {
  const router = table();
  const cases: Array<[string, string, string, readonly string[]]> = [
    ['get', '/', 'root', []],
    ['get', '/api/file/bafy', 'download', ['bafy']],
    ['get', '/api/file/bafy/status', 'status', ['bafy']],
    ['post', '/api/file/upload', 'upload', []],
    ['get', '/api/file/upload', 'download', ['upload']],
    ['get', '/ethtxs', 'relation', ['ethtxs']],
    ['delete', '/ethtxs', 'relation any', ['ethtxs']],
    ['options', '/ethtxs', 'relation any', ['ethtxs']],
    ['options', '/api/file/upload', 'preflight', []],
    ['post', '/rpc', 'rpc', []],
    ['post', '/rpc/a/b', 'rpc', []],
    ['get', '/api/file/a/b/c', 'not found', []],
    ['get', '/api/file/bafy/', 'not found', []],
    ['patch', '/', 'not found', []],
    ['get', '/api/file/', 'not found', []],
    ['get', '//', 'not found', []],
  ];
  for (const [method, path, expected, params] of cases) {
    const match = router.match(method, path);
    assert.equal(match?.value, expected, `${method} ${path}`);
    assert.deepEqual(match?.params, params, `${method} ${path}`);
  }
});

test('among equal routes the first registered wins; no route, no match', () => {
  const router = new Router<string>();
  router.add('get', '/a/:x', 'first');
  router.add('get', '/a/:y', 'second');
  assert.equal(router.match('get', '/a/1')?.value, 'first');
  assert.equal(router.match('get', '/b'), undefined);
  assert.equal(router.match('post', '/a/1'), undefined);
});
