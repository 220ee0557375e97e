// The edge where uWebSockets.js cannot load (Node 22 and 24 have no binary in the uWS package, for real; on Node 20
// ADM_HTTP_UWS=missing makes the binary count as missing): the built CLI comes up on node:http with one warning line,
// and answers what only that engine answers (HTTP/1.0, as nginx's default proxy speaks it). The package's own
// JavaScript imitation of uWS is never taken for uWS. A listener's own config key picks the engine too; a bad
// engine name, in a file or in the environment, is a startup error.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { UWS_MISSING_WARNING, uwsAvailable } from '../../http/engine.js';
import { freePort, startCli, type CliProcess } from '../support/cli.js';
import { filesCliConfig } from '../support/files-config.js';
import { closedWithin, openSocket } from '../support/raw-http.js';

async function http10(port: number): Promise<string> {
  const socket = await openSocket(port);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.write('GET / HTTP/1.0\r\n\r\n');
  await closedWithin(socket, 3_000);
  socket.destroy();
  return text;
}

for (const [name, env, extra] of [
  ['uWS missing (ADM_HTTP_UWS=missing)', { ADM_HTTP_UWS: 'missing', ADM_HTTP_ENGINE: undefined }, {}],
  ["the listener's own key (httpEngine: 'node')", { ADM_HTTP_UWS: undefined, ADM_HTTP_ENGINE: undefined }, { httpEngine: 'node' }],
] as const) {
  test(`files on node:http, ${name}: HTTP/1.0 answered`, async () => {
    const home = mkdtempSync(join(tmpdir(), 'edge-fallback-'));
    try {
      const port = await freePort();
      writeFileSync(join(home, 'config.json5'), JSON.stringify(filesCliConfig(port, extra)));
      const node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home, ...env });
      const listening = await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
      assert.equal(listening.engine, 'node');
      const answer = await http10(port);
      assert.match(answer, /^HTTP\/1\.[01] 200 OK\r\n/);
      assert.ok(answer.endsWith('\r\n\r\nIPFS node'));
      const warnings = node.lines.filter((line) => line.msg === UWS_MISSING_WARNING);
      assert.equal(warnings.length, env.ADM_HTTP_UWS === 'missing' ? 1 : 0, 'one warning line when the binary is missing, none when node:http is chosen');
      assert.equal(await node.stop(), 0);
    } finally {
      rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  });
}

test('an engine name that does not exist is a configuration error', async () => {
  const home = mkdtempSync(join(tmpdir(), 'edge-badengine-'));
  try {
    const port = await freePort();
    writeFileSync(join(home, 'config.json5'), JSON.stringify(filesCliConfig(port, { httpEngine: 'apache' })));
    const node = startCli(['files', '--check-config', '--config', join(home, 'config.json5')], { HOME: home });
    assert.equal(await node.exited(), 1);
    assert.match(node.stderr() + node.stdout(), /httpEngine: must be one of uws, node/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

/** The uWS package's own lines when it hands out its node:http imitation (src/uws.js of the package). */
const IMITATION_LINES = /µWS|Falling back to a NodeJS implementation/;

async function filesNode(home: string, env: Record<string, string | undefined>): Promise<{ node: CliProcess; port: number }> {
  const port = await freePort();
  writeFileSync(join(home, 'config.json5'), JSON.stringify(filesCliConfig(port)));
  return { node: startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home, ...env }), port };
}

// CI runs the whole suite on Node 22 and 24 too (.ci/run), where this runs; on Node 20 the binary is there.
const binaryMissing = process.versions.modules !== '115';
test(
  `on Node ${process.version} without a uWS binary: node:http on every listener, one warning naming the Node, never the imitation`,
  { skip: binaryMissing ? false : `the uWS binary loads on Node ${process.version}; .ci/run runs this on Node 22 and 24` },
  async () => {
    assert.equal(uwsAvailable(), false, 'this process has no uWS either');
    const home = mkdtempSync(join(tmpdir(), 'edge-nobinary-'));
    try {
      const { node, port } = await filesNode(home, { ADM_HTTP_UWS: undefined, ADM_HTTP_ENGINE: undefined });
      const listening = await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
      assert.equal(listening.engine, 'node');
      const answer = await http10(port);
      assert.match(answer, /^HTTP\/1\.[01] 200 OK\r\n/);
      const warnings = node.lines.filter((line) => line.msg === UWS_MISSING_WARNING);
      assert.equal(warnings.length, 1);
      assert.match(String(warnings[0]!.reason), new RegExp(`no uWebSockets.js binary for Node ${process.version.replace(/\./g, '\\.')}`));
      assert.equal(await node.stop(), 0);
      assert.doesNotMatch(node.stdout() + node.stderr(), IMITATION_LINES);
    } finally {
      rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  },
);

test("the package's imitation is never taken for uWS, even when its UWS_USE_FALLBACK switch asks for it", async () => {
  const home = mkdtempSync(join(tmpdir(), 'edge-imitation-'));
  try {
    const { node, port } = await filesNode(home, { ADM_HTTP_UWS: undefined, ADM_HTTP_ENGINE: undefined, UWS_USE_FALLBACK: '1' });
    const listening = await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
    // The native binary where this Node has one (Node 20), else node:http with the warning: never the imitation.
    assert.equal(listening.engine, uwsAvailable() ? 'uws' : 'node');
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(response.status, 200);
    // Real uWS names itself in every answer; node:http (and so the imitation on it) adds no such header.
    assert.equal(response.headers.get('uwebsockets'), uwsAvailable() ? '20' : null);
    assert.equal(node.lines.filter((line) => line.msg === UWS_MISSING_WARNING).length, uwsAvailable() ? 0 : 1);
    assert.equal(await node.stop(), 0);
    assert.doesNotMatch(node.stdout() + node.stderr(), IMITATION_LINES);
  } finally {
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});

for (const [name, value, pattern] of [
  ['ADM_HTTP_ENGINE', 'nodee', /ADM_HTTP_ENGINE: must be one of uws, node .*got 'nodee'/],
  ['ADM_HTTP_UWS', 'absent', /ADM_HTTP_UWS: must be 'missing' .*got 'absent'/],
  ['LOG_LEVEL', 'verbose', /LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent .*got 'verbose'/],
] as const) {
  test(`${name}=${value} is a startup error: the report, exit 1, no port opened`, async () => {
    const home = mkdtempSync(join(tmpdir(), 'edge-badenv-'));
    try {
      const { node, port } = await filesNode(home, { [name]: value });
      assert.equal(await node.exited(), 1);
      assert.match(node.stderr(), /^Invalid environment:\n/);
      assert.match(node.stderr(), pattern);
      assert.match(node.stderr(), /Cannot start the app\.\n$/);
      assert.equal(node.lines.filter((line) => line.msg === 'listening').length, 0);
      // Nothing is listening on the configured port.
      await assert.rejects(fetch(`http://127.0.0.1:${port}/`));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}
