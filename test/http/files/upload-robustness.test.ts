// Every upload body a stranger can send gets a 4xx and the node keeps serving (issue 14 item 0; docs/specs/files-node.md
// §4.2 "An interrupted upload leaves no blocks"): bodies cut off before their closing boundary, at every position;
// malformed and duplicate part headers; 10,000 parts; random bytes; oversize bodies the client keeps sending (the
// 413 must still reach it); CIDs that parse but name content this node can never serve.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CID } from 'multiformats/cid';
import * as Digest from 'multiformats/hashes/digest';
import { resolveEngine } from '../../../http/engine.js';
import { captureLogger } from '../../support/logger.js';
import { blockCount, startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';
import { filePart, keepSending, multipartBody, openSocket, readResponse } from '../../support/raw-http.js';
import { waitFor } from '../../support/wait.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const BOUNDARY = 'fuzzBoundary';
const MALFORMED = { error: 'Malformed multipart body' };

/** A seeded generator, so a failing fuzz case is the same on every run. */
function seeded(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('upload bodies a stranger can send', () => {
  let node: TestFilesNode;
  let home: string;
  const url = (path: string) => `http://127.0.0.1:${node.port}${path}`;

  /** POSTs `body` as it is, with the multipart content type unless `contentType` says otherwise. */
  async function post(body: Buffer, contentType: string | null = `multipart/form-data; boundary=${BOUNDARY}`) {
    const headers: Record<string, string> = contentType === null ? {} : { 'content-type': contentType };
    const response = await fetch(url('/api/file/upload'), { method: 'POST', body: new Uint8Array(body), headers });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, body: json };
  }

  async function assertServing(what: string) {
    const response = await fetch(url('/'));
    assert.equal(response.status, 200, `the node still serves after ${what}`);
    assert.equal(await response.text(), 'IPFS node');
  }

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-fuzz-'));
    node = await startTestFilesNode(join(home, '.adm-ipfs'), [
      {
        maxFileCount: 3,
        uploadLimitSizeBytes: 1 * MiB,
        storage: { maxRequestSizeBytes: 2 * MiB },
        // Hundreds of requests from one client: the per-client upload limit is not what these tests are about.
        rateLimits: { upload: { windowMs: 60_000, limit: 100_000 } },
      },
    ]);
    await node.startupDone;
  });

  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("the issue's body (a part and no closing boundary) answers 400 and the node keeps serving", async () => {
    const before = blockCount(node.storeDirectory);
    const body = Buffer.from('--XB\r\nContent-Disposition: form-data; name="files"; filename="a.bin"\r\n\r\nhello');
    assert.deepEqual(await post(body, 'multipart/form-data; boundary=XB'), { status: 400, body: MALFORMED });
    await assertServing('a truncated body');
    assert.equal(blockCount(node.storeDirectory), before, 'no block left behind');
  });

  it('the second part cut off while the first is importing: 400, and the first file is rolled back', async () => {
    const before = blockCount(node.storeDirectory);
    const first = randomBytes(900 * KiB);
    const body = Buffer.concat([
      multipartBody(BOUNDARY, [{ headers: filePart('one.bin'), content: first }], false),
      Buffer.from(`--${BOUNDARY}\r\n${filePart('two.bin')}\r\n\r\n`),
      randomBytes(300 * KiB),
    ]);
    assert.deepEqual(await post(body), { status: 400, body: MALFORMED });
    await waitFor(() => blockCount(node.storeDirectory) === before, { what: 'the session rolled the first file back' });
    await assertServing('a body cut inside its second part');
  });

  it('a body cut at every position answers 400 (200 only once the closing boundary is whole); no 5xx, no block kept', async () => {
    const before = blockCount(node.storeDirectory);
    const files = [randomBytes(37), randomBytes(41)];
    const body = multipartBody(BOUNDARY, [
      { headers: filePart('a.bin'), content: files[0]! },
      { headers: filePart('b.bin'), content: files[1]! },
    ]);
    const closing = body.lastIndexOf(`--${BOUNDARY}--`) + `--${BOUNDARY}--`.length;
    let accepted = 0;
    for (let cut = 0; cut <= body.length; cut++) {
      const { status, body: answer } = await post(body.subarray(0, cut));
      if (cut >= closing) {
        assert.equal(status, 200, `cut at ${cut} of ${body.length}: the closing boundary is whole`);
        accepted++;
        continue;
      }
      assert.equal(status, 400, `cut at ${cut} of ${body.length} answered ${status} ${JSON.stringify(answer)}`);
      assert.ok(['Malformed multipart body', 'No file uploaded'].includes((answer as { error: string }).error), `cut at ${cut}: ${JSON.stringify(answer)}`);
    }
    assert.ok(accepted > 0);
    // The accepted uploads stored the same two single-block files; every refused one removed what it wrote.
    assert.equal(blockCount(node.storeDirectory), before + 2);
    await assertServing('every truncation');
  });

  it('malformed, missing and duplicate headers: each a 4xx with the error object', async () => {
    const file = randomBytes(100);
    const one = (headers: string) => multipartBody(BOUNDARY, [{ headers, content: file }]);
    const cases: Array<[string, () => Promise<{ status: number; body: unknown }>, number | undefined]> = [
      ['no content type', () => post(one(filePart('a.bin')), null), 400],
      ['not multipart', () => post(one(filePart('a.bin')), 'application/json'), 400],
      ['multipart without a boundary', () => post(one(filePart('a.bin')), 'multipart/form-data'), 400],
      ['another boundary than the body uses', () => post(one(filePart('a.bin')), 'multipart/form-data; boundary=other'), 400],
      ['empty body', () => post(Buffer.alloc(0)), 400],
      ['only the closing boundary', () => post(Buffer.from(`--${BOUNDARY}--\r\n`)), 400],
      ['a part without Content-Disposition', () => post(one('Content-Type: application/octet-stream')), 400],
      ['a part without a name', () => post(one('Content-Disposition: form-data; filename="a.bin"')), 400],
      ['a text field', () => post(one('Content-Disposition: form-data; name="files"')), 400],
      ['a header line without a colon', () => post(one(`${filePart('a.bin')}\r\nthis is not a header`)), undefined],
      ['a 100 KiB header', () => post(one(`${filePart('a.bin')}\r\nX-Long: ${'x'.repeat(100 * KiB)}`)), undefined],
      ['3,000 header lines', () => post(one(`${filePart('a.bin')}\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}`)), undefined],
      ['duplicate Content-Disposition', () => post(one(`${filePart('a.bin')}\r\nContent-Disposition: form-data; name="other"; filename="b.bin"`)), undefined],
      ['a part whose headers never end', () => post(Buffer.from(`--${BOUNDARY}\r\n${filePart('a.bin')}\r\n`)), 400],
      ['garbage instead of a boundary', () => post(Buffer.from(`\0\0\0garbage\r\n\r\n--${BOUNDARY}`)), 400],
    ];
    for (const [name, run, expected] of cases) {
      const { status, body } = await run();
      if (expected !== undefined) assert.equal(status, expected, `${name}: ${status} ${JSON.stringify(body)}`);
      // A duplicate header may be read either way; what may never happen is a 5xx or a missing answer.
      else assert.ok(status === 200 || (status >= 400 && status < 500), `${name}: ${status} ${JSON.stringify(body)}`);
      if (status !== 200) assert.equal(typeof (body as { error?: unknown }).error, 'string', `${name}: the error object`);
    }
    await assertServing('malformed headers');
  });

  it('10,000 parts: 400 at the file limit, or for the first text field', async () => {
    const files = multipartBody(
      BOUNDARY,
      Array.from({ length: 10_000 }, (_, i) => ({ headers: filePart(`${i}.bin`), content: String(i) })),
    );
    assert.deepEqual(await post(files), { status: 400, body: { error: 'File limit exceeded. Max 3 allowed.' } });
    const fields = multipartBody(
      BOUNDARY,
      Array.from({ length: 10_000 }, (_, i) => ({ headers: `Content-Disposition: form-data; name="f${i}"`, content: String(i) })),
    );
    assert.deepEqual(await post(fields), { status: 400, body: { error: 'Unexpected field' } });
    await assertServing('10,000 parts');
  });

  it('200 random bodies (seeded): each a 4xx', async () => {
    const random = seeded(14);
    for (let round = 0; round < 200; round++) {
      const length = Math.floor(random() * 600);
      const body = Buffer.alloc(length);
      for (let i = 0; i < length; i++) body[i] = Math.floor(random() * 256);
      // Half of them start like a real body, so the parser gets past the preamble.
      const sent = round % 2 === 0 ? Buffer.concat([Buffer.from(`--${BOUNDARY}\r\n`), body]) : body;
      const { status } = await post(sent);
      assert.ok(status >= 400 && status < 500, `round ${round}: ${status}`);
    }
    await assertServing('random bodies');
  });

  it('413 reaches a client that keeps sending, declared or streamed, every time', async () => {
    for (const declared of [true, false]) {
      for (let attempt = 0; attempt < 10; attempt++) {
        const seen = await keepSending(node.port, BOUNDARY, declared);
        assert.equal(seen.status, 413, `${declared ? 'declared' : 'streamed'} attempt ${attempt}: ${JSON.stringify(seen)}`);
        assert.deepEqual(JSON.parse(seen.body!), { error: 'Request too large' });
      }
    }
    await assertServing('oversize bodies');
  });

  it('a refusal before the body was read announces Connection: close', async () => {
    const socket = await openSocket(node.port);
    try {
      const answer = readResponse(socket);
      // The body is sent as a client sends it: where the engine ends the connection with the answer (node:http), the
      // answer waits for the rest of the body (a client still sending would meet a reset first).
      socket.write(`POST /api/file/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${4 * MiB}\r\n\r\n`);
      socket.write(Buffer.alloc(4 * MiB, 1));
      const response = await answer;
      assert.equal(response.status, 413);
      // uWS answers at once and announces the close (it drops the rest of a keep-alive body); node:http answers once
      // the body has been read whole, so the connection stays usable.
      const engine = resolveEngine(undefined, captureLogger().logger);
      assert.equal(response.header('connection')?.toLowerCase(), engine === 'uws' ? 'close' : 'keep-alive');
    } finally {
      socket.destroy();
    }
  });

  it('a CID that parses but names content this node can never serve answers 400, never 500', async () => {
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(randomBytes(3000))]), 'x.bin');
    const uploaded = (await (await fetch(url('/api/file/upload'), { method: 'POST', body: form })).json()) as { cids: string[] };
    const stored = CID.parse(uploaded.cids[0]!);
    // Refused from the CID alone (every route), or only once the block is read (the download; status: unknown, 404).
    const unservable: Array<[string, CID, 'parse' | 'read']> = [
      ['blake2b-256', CID.create(1, 0x55, Digest.create(0xb220, new Uint8Array(32).fill(1))), 'parse'],
      ['sha3-256', CID.create(1, 0x55, Digest.create(0x16, new Uint8Array(32).fill(1))), 'parse'],
      ['a sha2-256 digest of 20 bytes', CID.create(1, 0x55, Digest.create(0x12, new Uint8Array(20).fill(1))), 'parse'],
      ['dag-cbor codec', CID.create(1, 0x71, stored.multihash), 'parse'],
      ['dag-pb codec over a raw block', CID.create(1, 0x70, stored.multihash), 'read'],
      ['CIDv0 of a raw block', CID.createV0(stored.multihash as never), 'read'],
    ];
    for (const [name, cid, refusedAt] of unservable) {
      const download = await fetch(url(`/api/file/${cid}`));
      assert.equal(download.status, 400, `${name}: download`);
      assert.deepEqual(await download.json(), { error: 'Invalid CID' }, name);
      assert.equal((await fetch(url(`/api/file/${cid}/status`))).status, refusedAt === 'parse' ? 400 : 404, `${name}: status`);
    }
    // The stored file itself still downloads.
    assert.equal((await fetch(url(`/api/file/${stored}`))).status, 200);
  });
});
