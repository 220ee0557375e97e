// The edge where uWebSockets.js cannot load (another Node version or platform; here ADM_HTTP_UWS=missing makes the
// binary count as missing): the built CLI comes up on node:http with one warning line, and answers what only that
// engine answers (HTTP/1.0, as nginx's default proxy speaks it). A listener's own config key picks the engine too.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, startCli } from '../support/cli.js';
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
      const warnings = node.lines.filter((line) => line.msg === 'uWebSockets.js cannot load here; the HTTP edge uses node:http');
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
