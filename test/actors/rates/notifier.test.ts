// rates.notifier: every notice is logged (markdown stripped, secrets scrubbed) and posted to each webhook
// in the original payload shapes, and sent as an ADAMANT chat message to each address (docs/notes/rates.md E.3).
// The webhooks here are a loopback server: the config's URL patterns only admit Slack and Discord hosts, so the
// actor is built directly; the ADAMANT node is the fake node of test/support/adamant-node.ts.

import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createActor, SimulatedClock } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { notifierLogic, WEBHOOK_TIMEOUT_MS } from '../../../actors/rates/notifier.actor.js';
import { addressFromPublicKey, keyPairFromPassphrase } from '../../../src/console/crypto.js';
import type { Logger } from '../../../src/logger.js';
import { startFakeAdamantNode } from '../../support/adamant-node.js';
import { captureLogger } from '../../support/logger.js';
import { waitFor } from '../../support/wait.js';

test('a notice is logged once and posted to every Slack and Discord webhook', async () => {
  const received: Array<{ path: string; body: any }> = [];
  const server = createServer((req, res) => {
    let data = '';
    req.on('data', (chunk) => (data += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(data) });
      res.writeHead(req.url === '/broken' ? 500 : 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { logger, lines } = captureLogger();
  const actor = createActor(
    notifierLogic({ name: 'Currencyinfo', slack: [`${base}/slack`], discord: [`${base}/discord`, `${base}/broken`], logger, clock: systemClock }),
  ).start();
  try {
    actor.send({ type: 'notify.send', level: 'warn', message: 'Unable to fetch valid data from **CoinLore**. HTTP 500 at https://x.io/?api_key=SECRET123' });
    await waitFor(() => received.length === 3 && lines.some((l) => l.msg === 'notification delivery failed'), { what: 'three deliveries' });
    const slack = received.find((r) => r.path === '/slack')!.body;
    assert.deepEqual(Object.keys(slack.attachments[0]), ['fallback', 'color', 'text', 'mrkdwn_in']);
    assert.equal(slack.attachments[0].color, '#FFFF00');
    assert.equal(slack.attachments[0].text, '*Currencyinfo*# Unable to fetch valid data from *CoinLore*. HTTP 500 at https://x.io/?api_key=***');
    assert.deepEqual(slack.attachments[0].mrkdwn_in, ['text']);
    const discord = received.find((r) => r.path === '/discord')!.body;
    assert.deepEqual(discord, {
      embeds: [{ color: 16776960, description: '**Currencyinfo**# Unable to fetch valid data from **CoinLore**. HTTP 500 at https://x.io/?api_key=***' }],
    });
    const logged = lines.filter((l) => l.notice === true);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.level, 'warn');
    assert.equal(logged[0]!.msg, 'Unable to fetch valid data from CoinLore. HTTP 500 at https://x.io/?api_key=***');
    assert.ok(!JSON.stringify(lines).includes('SECRET123'), 'the key never reaches a log line');
    assert.ok(!JSON.stringify(received).includes('SECRET123'), 'the key never reaches a channel');
  } finally {
    actor.stop();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a webhook that never answers is given up at WEBHOOK_TIMEOUT_MS on the injected clock, with a warning only', async () => {
  const hanging: ServerResponse[] = [];
  const server = createServer((request, response) => {
    request.resume();
    hanging.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clock = new SimulatedClock();
  const { logger, lines } = captureLogger();
  const actor = createActor(notifierLogic({ name: 'Currencyinfo', slack: [`${base}/slack`], discord: [], logger, clock })).start();
  const failures = () => lines.filter((line) => line.msg === 'notification delivery failed');
  try {
    actor.send({ type: 'notify.send', level: 'warn', message: 'nobody listens' });
    await waitFor(() => hanging.length === 1, { what: 'the webhook request to arrive' });
    // Short of the timeout on the injected clock, and some wall-clock time later, the delivery is still waiting.
    clock.increment(WEBHOOK_TIMEOUT_MS - 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(failures(), []);
    clock.increment(1);
    const [failure] = await waitFor(() => failures().length > 0 && failures(), { timeoutMs: 2_000, what: 'the timeout warning' });
    assert.equal(failure!.level, 'warn');
    assert.equal(failure!.channel, 'slack');
    assert.equal(failure!.reason, 'The operation was aborted due to timeout');
    assert.equal(actor.getSnapshot().status, 'active', 'the notifier keeps running');
  } finally {
    actor.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

// ---------------------------------------------------------------------------------------------
// The ADAMANT channel (docs/notes/rates.md E.3): an encrypted basic chat message `<level>| **<name>**# <message>` to each
// configured address, through the console's node client, against the signature-checking fake node, which decrypts
// what its test accounts receive.

/** Public BIP-39 test mnemonics, no real funds: the sending account and two recipients the fake node reads for. */
const SENDER = `${'abandon '.repeat(11)}about`;
const RECIPIENT_A = `${'zoo '.repeat(11)}wrong`;
const RECIPIENT_B = `${'legal winner thank year wave sausage worth useful legal winner thank '}yellow`;
const addressOf = (passphrase: string) => addressFromPublicKey(keyPairFromPassphrase(passphrase).publicKey);
const NOTICE = 'Unable to fetch valid data from **CoinLore**. HTTP 500 at https://x.io/?api_key=SECRET123';
const SENDER_KEYS = keyPairFromPassphrase(SENDER);

/** Nothing secret in what the test captured: not the passphrase, not a word run of it, not the private key. */
function assertNoSecret(captured: unknown, what: string): void {
  const text = JSON.stringify(captured);
  assert.ok(!text.includes(SENDER), `${what}: no passphrase`);
  assert.ok(!text.includes('abandon abandon'), `${what}: no passphrase words`);
  assert.ok(!text.includes(SENDER_KEYS.privateKey.toString('hex').slice(0, 64)), `${what}: no private key`);
}

/** A loopback port nothing listens on: connections are refused (the request is certainly never sent). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

function adamantNotifier(nodes: readonly string[], addresses: readonly string[], logger: Logger) {
  return createActor(
    notifierLogic({ name: 'Currencyinfo', slack: [], discord: [], logger, clock: systemClock, adamant: { addresses, passphrase: SENDER, nodes, now: () => Date.now() } }),
  ).start();
}

test('ADAMANT: a notice reaches two addresses as encrypted basic chat messages with the exact original text', async () => {
  const node = await startFakeAdamantNode({ accounts: [RECIPIENT_A, RECIPIENT_B] });
  const { logger, lines } = captureLogger();
  const actor = adamantNotifier([node.url], [addressOf(RECIPIENT_A), addressOf(RECIPIENT_B)], logger);
  try {
    actor.send({ type: 'notify.send', level: 'warn', message: NOTICE });
    await waitFor(() => node.received.length === 2, { what: 'two decrypted messages' });
    const expected = 'warn| **Currencyinfo**# Unable to fetch valid data from **CoinLore**. HTTP 500 at https://x.io/?api_key=***';
    assert.deepEqual(
      node.received.map((message) => message.recipientId).sort(),
      [addressOf(RECIPIENT_A), addressOf(RECIPIENT_B)].sort(),
    );
    for (const message of node.received) {
      assert.equal(message.text, expected);
      assert.equal(message.chatType, 1, 'a basic message');
      assert.equal(message.senderId, addressOf(SENDER));
    }
    for (const { transaction, path } of node.accepted) {
      assert.equal(path, 'transactions/process');
      assert.equal(transaction.type, 8);
      assert.equal(transaction.amount, 0);
    }
    actor.send({ type: 'notify.send', level: 'info', message: 'Infoservice v4.2.0 started on port 36661' });
    await waitFor(() => node.received.length === 4, { what: 'the second notice' });
    assert.deepEqual(node.received.slice(2).map((message) => message.text), [
      'info| **Currencyinfo**# Infoservice v4.2.0 started on port 36661',
      'info| **Currencyinfo**# Infoservice v4.2.0 started on port 36661',
    ]);
    await waitFor(() => lines.filter((line) => line.msg === 'notification delivered').length === 4, { what: 'delivery debug lines' });
    assert.ok(!lines.some((line) => line.level === 'warn' && line.msg === 'notification delivery failed'));
    assertNoSecret(lines, 'log lines');
    assertNoSecret(node.requests.map((request) => [request.url, request.body]), 'requests to the node');
  } finally {
    actor.stop();
    await node.close();
  }
});

test('ADAMANT: an unknown recipient, a node that is down and a node that refuses only warn; later notices are still sent', async () => {
  const node = await startFakeAdamantNode({ accounts: [RECIPIENT_A] });
  const { logger, lines } = captureLogger();
  const unknown = addressOf(RECIPIENT_B);
  const dead = await closedPortUrl();
  // The dead node first: GETs and POSTs move on from a refused connection, and the dead node moves to the back.
  const actor = adamantNotifier([dead, node.url], [addressOf(RECIPIENT_A), unknown], logger);
  const failures = () => lines.filter((line) => line.msg === 'notification delivery failed');
  try {
    actor.send({ type: 'notify.send', level: 'error', message: 'first' });
    await waitFor(() => node.received.length === 1 && failures().length === 1, { what: 'one delivery and one failure' });
    assert.equal(node.received[0]!.text, 'error| **Currencyinfo**# first');
    const [unknownFailure] = failures();
    assert.equal(unknownFailure!.level, 'warn');
    assert.equal(unknownFailure!.channel, 'adamant');
    assert.equal(unknownFailure!.recipient, unknown);
    assert.match(String(unknownFailure!.reason), /^Unable to get public key for U\d+\. Account may be uninitialized/);
    assert.ok(!lines.some((line) => (line.level === 'error' || line.level === 'fatal') && line.notice !== true), 'failures are warnings only');

    // The node refuses the transaction (`success: false`): its error is the reason.
    node.routes.set('transactions/process', () => [200, { success: false, nodeTimestamp: 1, error: 'Not enough balance' }]);
    actor.send({ type: 'notify.send', level: 'warn', message: 'second' });
    await waitFor(() => failures().length === 3, { what: 'two more failures' });
    assert.ok(failures().some((line) => line.reason === 'Not enough balance' && line.recipient === addressOf(RECIPIENT_A)));
    node.routes.delete('transactions/process');

    // Every node down: the reason names the last node's failure, nothing more.
    await node.close();
    actor.send({ type: 'notify.send', level: 'warn', message: 'third' });
    await waitFor(() => failures().length === 5, { what: 'node-down failures' });
    for (const line of failures().slice(3)) {
      assert.equal(line.channel, 'adamant');
      assert.match(String(line.reason), /^No ADAMANT node answered accounts\/getPublicKey: 127\.0\.0\.1:\d+: ECONNREFUSED$/);
    }
    assert.equal(actor.getSnapshot().status, 'active', 'the notifier keeps running');
    assertNoSecret(lines, 'log lines');
  } finally {
    actor.stop();
    await node.close();
  }
});

test('ADAMANT: stopping the notifier aborts a send in flight, without a warning', async () => {
  const pending: Array<{ closed: boolean }> = [];
  const hanging = createServer((request) => {
    const entry = { closed: false };
    pending.push(entry);
    request.on('close', () => (entry.closed = true));
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const { logger, lines } = captureLogger();
  const actor = adamantNotifier([`http://127.0.0.1:${(hanging.address() as AddressInfo).port}`], [addressOf(RECIPIENT_A)], logger);
  try {
    actor.send({ type: 'notify.send', level: 'warn', message: 'never answered' });
    await waitFor(() => pending.length === 1, { what: 'the public-key lookup to arrive' });
    actor.stop();
    await waitFor(() => pending[0]!.closed, { what: 'the request to be aborted' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(lines.filter((line) => line.msg === 'notification delivery failed'), []);
  } finally {
    actor.stop();
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
  }
});

test('ADAMANT: no addresses means no channel, and no node is contacted', async () => {
  const node = await startFakeAdamantNode({ accounts: [RECIPIENT_A] });
  const { logger, lines } = captureLogger();
  const actor = adamantNotifier([node.url], [], logger);
  try {
    actor.send({ type: 'notify.send', level: 'warn', message: 'logged only' });
    await waitFor(() => lines.some((line) => line.notice === true), { what: 'the log line' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(node.requests, []);
  } finally {
    actor.stop();
    await node.close();
  }
});
