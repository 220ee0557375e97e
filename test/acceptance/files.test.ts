// Black-box acceptance of the files node (docs/notes/files-node.md E): the built CLI as a real process with its
// own HOME, observed through HTTP, its exit code and its stdout.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Socket } from 'node:net';
import { freePort, startCli } from '../support/cli.js';
import { filesCliConfig } from '../support/files-config.js';
import { filePart, keepSending, openSocket, sleep } from '../support/raw-http.js';
import { CURL_EXECUTABLE, curlPackage, skipWithout } from '../support/system-packages.js';
import { captureLogger } from '../support/logger.js';
import { resolveEngine } from '../../http/engine.js';

const KEY = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4';
const README_CID = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';

function config(port: number, extra: Record<string, unknown> = {}) {
  // someKeyFromTheFuture: unknown keys are ignored (spec §8).
  return filesCliConfig(port, { adminApiKey: KEY, someKeyFromTheFuture: true, ...extra });
}

test('files: upload, download, restart persistence, no CID in the logs, SIGTERM exits 0', async () => {
  const home = mkdtempSync(join(tmpdir(), 'files-cli-'));
  try {
    const port = await freePort();
    writeFileSync(join(home, 'config.json5'), `// operator comments are allowed\n${JSON.stringify(config(port))}`);
    let node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home });
    await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
    const body = new FormData();
    body.append('files', new Blob([new TextEncoder().encode('Hello ipfs-node!\n')]), 'file.txt');
    const uploaded = await fetch(`http://127.0.0.1:${port}/api/file/upload`, { method: 'POST', body });
    assert.equal(uploaded.status, 200);
    assert.deepEqual(((await uploaded.json()) as any).cids, [README_CID]);
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/api/file/${README_CID}`)).text(), 'Hello ipfs-node!\n');
    // E49: the policy echoes the configuration; replication is on by default, so durability is quorum.
    const policy = (await (await fetch(`http://127.0.0.1:${port}/api/storage/policy`)).json()) as any;
    assert.equal(policy.maxFileCount, 5);
    assert.equal(policy.uploadLimitSizeBytes, 1024 * 1024);
    assert.equal(policy.maxRequestSizeBytes, 536870912);
    assert.equal(policy.confirmationRequired, false);
    assert.equal(policy.temporaryTtlMs, 86_400_000);
    assert.deepEqual(policy.durability, {
      mode: 'quorum',
      placement: [{ minAgeMs: 0, copies: 4 }, { minAgeMs: 15552000000, copies: 3 }, { minAgeMs: 31536000000, copies: 2 }],
      ackQuorum: 1,
    });
    assert.equal(await node.stop(), 0);
    assert.ok(node.lines.some((line) => line.msg === 'stopped'));
    assert.ok(!node.stdout().includes(README_CID) && !node.stdout().includes('12D3KooW'), 'no CID or peer id in any log line');
    assert.ok(!node.stdout().includes('file.txt'), 'no filename in any log line');

    node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home });
    await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
    const status = await fetch(`http://127.0.0.1:${port}/api/file/${README_CID}/status`);
    assert.equal(status.status, 200, 'the registry survived the restart');
    assert.equal(((await status.json()) as any).state, 'confirmed');
    assert.equal(await node.stop(), 0);
  } finally {
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});

test('files: an invalid configuration is reported and the process exits non-zero before opening its port', async () => {
  const home = mkdtempSync(join(tmpdir(), 'files-badcfg-'));
  try {
    const port = await freePort();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['31-character key', { adminApiKey: 'x'.repeat(31) }, /adminApiKey/],
      ['trustProxy true', { trustProxy: true }, /trustProxy/],
      ['watermarks', { storage: { gc: { highWatermarkBytes: 10, lowWatermarkBytes: 10 } } }, /lowWatermarkBytes/],
      ['empty origins', { cors: { allowedOrigins: [] } }, /allowedOrigins/],
    ];
    for (const [name, extra, problem] of cases) {
      writeFileSync(join(home, 'config.json5'), JSON.stringify(config(port, extra)));
      const node = startCli(['files', '--config', join(home, 'config.json5')], { HOME: home });
      const code = await node.exited();
      assert.notEqual(code, 0, name);
      assert.match(node.stderr(), problem, name);
      await assert.rejects(fetch(`http://127.0.0.1:${port}/`), `${name}: the port never opened`);
    }
  } finally {
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});

test('files: health reaches ready, node and storage routes answer, GC runs, height and peer id survive a restart', async () => {
  const home = mkdtempSync(join(tmpdir(), 'files-cli-health-'));
  try {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const admin = { 'x-api-key': KEY };
    writeFileSync(
      join(home, 'config.json5'),
      JSON.stringify(config(port, { diskUsageScanPeriod: '* * * * * *', health: { checkpointIntervalMs: 1000 } })),
    );
    const start = async () => {
      const node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home });
      await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
      return node;
    };
    const health = async () => (await (await fetch(`${base}/api/node/health`)).json()) as any;
    const readyHealth = async () => {
      for (let i = 0; i < 150; i++) {
        const current = await health();
        if (current.state === 'ready' && current.height > 0) return current;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`never ready: ${JSON.stringify(await health())}`);
    };

    let node = await start();
    // E6: ready within 10 intervals, with the startup walk complete.
    const first = await readyHealth();
    assert.equal(first.startup.complete, true);
    assert.equal(first.checks.peerAttestations, true, 'E11: no peers required');
    // E14: public legacy info, no identity.
    const info = (await (await fetch(`${base}/api/node/info`)).json()) as any;
    assert.equal(typeof info.runtimeStatus, 'string');
    assert.equal('peerId' in info || 'multiAddresses' in info, false);
    // E15: details need the key.
    assert.equal((await fetch(`${base}/api/node/details`)).status, 401);
    const details = (await (await fetch(`${base}/api/node/details`, { headers: admin })).json()) as any;
    assert.match(details.peerId, /^12D3KooW/);
    // E47/E50: a forced collection and its trace in the metrics.
    const gc = await fetch(`${base}/api/storage/gc?force=true`, { method: 'POST', headers: admin });
    assert.equal(gc.status, 200);
    assert.equal(((await gc.json()) as any).trigger, 'force');
    const metrics = (await (await fetch(`${base}/api/storage/metrics`)).json()) as any;
    assert.ok(Array.isArray(metrics.gc.lastRun?.errors), 'gc.lastRun with errors after a run');
    assert.equal(await node.stop(), 0);
    // spec §6: request logs hold the masked route shape, never the path.
    const requests = node.lines.filter((line) => line.msg === 'request');
    assert.ok(requests.some((line) => line.route === '/api/node/health' && line.status === 200 && line.method === 'GET'));
    assert.ok(!node.stdout().includes(details.peerId), 'no peer id in any log line');

    node = await start();
    const again = await readyHealth();
    assert.ok(again.height >= first.height, `height never decreases: ${first.height} → ${again.height}`);
    const restarted = (await (await fetch(`${base}/api/node/details`, { headers: admin })).json()) as any;
    assert.equal(restarted.peerId, details.peerId, 'the peer id survives the restart');
    assert.equal(await node.stop(), 0);
  } finally {
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});

test('files: SIGTERM while an upload body is still arriving lets it run into the 15 s deadline: exit 1 with the timeout line', async () => {
  const home = mkdtempSync(join(tmpdir(), 'files-held-'));
  const socket = { current: undefined as Socket | undefined };
  try {
    const port = await freePort();
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config(port)));
    const node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home });
    await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
    // 2 KiB/s: above the upload floor, far below uWS's own re-arm rate; 1 MiB would take minutes.
    const held = await openSocket(port);
    socket.current = held;
    held.write(`POST /api/file/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=HB\r\nContent-Length: ${1024 * 1024}\r\n\r\n`);
    held.write(`--HB\r\n${filePart('held.bin')}\r\n\r\n`);
    const trickle = setInterval(() => held.writable && held.write(Buffer.alloc(512, 1)), 250);
    try {
      await sleep(1_000);
      const signalled = Date.now();
      node.child.kill('SIGTERM');
      const code = await node.exited(25_000);
      const elapsed = Date.now() - signalled;
      assert.equal(code, 1, 'the held upload kept the process past its deadline');
      assert.ok(elapsed >= 14_000 && elapsed < 20_000, `exited ${elapsed} ms after SIGTERM`);
      assert.ok(node.lines.some((line) => line.level === 'error' && line.msg === 'shutdown timed out; exiting'), 'the timeout log line');
    } finally {
      clearInterval(trickle);
    }
  } finally {
    socket.current?.destroy();
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});

test('files: curl -F sees the 507 of a node that refuses its upload, whether it waits for 100-continue or not', { skip: skipWithout(curlPackage(), 'the curl refusal test (test/acceptance/files.test.ts)') }, async () => {
  // What a user types (README "Upload"): curl builds the multipart body from a file and, for a body this size, first
  // asks `Expect: 100-continue`. With `-H Expect:` it sends at once, and a refusal then arrives while it is still
  // sending; `Connection: close` is what makes uWS end the connection as it answers. curl reads an answer that comes
  // while it sends and stops sending, so this also passed with the edge answering at once (checked on both engines,
  // before the edge waited for the rest of the body): it guards the path users take, the test above the edge's wait.
  const home = mkdtempSync(join(tmpdir(), 'files-cli-curl-'));
  try {
    const port = await freePort();
    const refuseAll = { storage: { diskReserveBytes: Number.MAX_SAFE_INTEGER }, rateLimits: { upload: { windowMs: 60_000, limit: 100_000 } } };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config(port, refuseAll)));
    const upload = join(home, 'eight-mib.bin');
    writeFileSync(upload, Buffer.alloc(8 * 1024 * 1024, 7));
    const node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home });
    try {
      await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
      const variants: Record<string, string[]> = {
        'curl default (Expect: 100-continue)': [],
        'no Expect': ['-H', 'Expect:'],
        'no Expect, Connection: close': ['-H', 'Expect:', '-H', 'Connection: close'],
      };
      // HTTP/1.0 (no keep-alive: the connection ends with the answer) only where it is answered at all: this uWS
      // build never answers HTTP/1.0 (README "The HTTP edge").
      if (resolveEngine(undefined, captureLogger().logger) === 'node') variants['HTTP/1.0'] = ['--http1.0'];
      for (const [what, extra] of Object.entries(variants)) {
        for (let attempt = 0; attempt < 3; attempt++) {
          const answer = await runCurl([...extra, '-F', `files=@${upload}`, `http://127.0.0.1:${port}/api/file/upload`]);
          assert.equal(answer.status, 507, `${what}, attempt ${attempt}: ${JSON.stringify(answer)}`);
          assert.deepEqual(JSON.parse(answer.body), { error: 'Insufficient storage' }, what);
        }
      }
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'IPFS node');
    } finally {
      assert.equal(await node.stop(), 0);
    }
  } finally {
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});

/** One curl run: its status line's code and body, or its error (curl exits non-zero on a reset; `status` is then 0). */
function runCurl(args: readonly string[]): Promise<{ status: number; body: string; error?: string }> {
  return new Promise((resolve) => {
    execFile(CURL_EXECUTABLE, ['-sS', '--max-time', '60', '-w', '\n%{http_code}', ...args], { maxBuffer: 1024 * 1024 }, (error, stdout, stderr) => {
      const cut = stdout.lastIndexOf('\n');
      resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut), ...(error ? { error: `${error.message} ${stderr}`.trim() } : {}) });
    });
  });
}

test('files: a refusal given while the body is still arriving reaches a client that keeps sending, Connection: close or keep-alive', async () => {
  // uWS ends a `Connection: close` request's connection once the answer is written, and node:http ends every
  // connection whose answer says `Connection: close` (the edge says so when it answers before the body was read).
  // Written while the client was still sending, the client's next write met a reset and it never read the answer: a
  // 507 was EPIPE 10 times of 10 for Node's agent-less client on uWS, and about half the time for any client on
  // node:http. The answer now waits for the rest of the body.
  const home = mkdtempSync(join(tmpdir(), 'files-cli-close-'));
  try {
    const port = await freePort();
    // A disk reserve above the free space: every upload is refused with 507 after the content actor was asked.
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config(port, { storage: { diskReserveBytes: Number.MAX_SAFE_INTEGER }, rateLimits: { upload: { windowMs: 60_000, limit: 100_000 } } })));
    const node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home });
    try {
      await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
      for (const connectionClose of [true, false]) {
        for (const declared of [true, false]) {
          for (let attempt = 0; attempt < 5; attempt++) {
            const seen = await keepSending(port, 'closeBoundary', declared, connectionClose);
            const what = `${connectionClose ? 'Connection: close' : 'keep-alive'}, ${declared ? 'declared' : 'streamed'}, attempt ${attempt}`;
            assert.equal(seen.status, 507, `${what}: ${JSON.stringify(seen)}`);
            assert.deepEqual(JSON.parse(seen.body!), { error: 'Insufficient storage' });
          }
        }
      }
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'IPFS node');
    } finally {
      // Also after a failed assertion: a node left running would keep this test file from ever ending.
      assert.equal(await node.stop(), 0);
    }
  } finally {
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
});
