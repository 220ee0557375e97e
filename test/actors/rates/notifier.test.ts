// rates.notifier: every notice is logged (markdown stripped, secrets scrubbed) and posted to each webhook
// in the original payload shapes (notes/rates.md E.3). The webhooks here are a loopback server: the
// config's URL patterns only admit Slack and Discord hosts, so the actor is built directly.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createActor } from 'xstate';
import { notifierLogic } from '../../../actors/rates/notifier.actor.js';
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
    notifierLogic({ name: 'Currencyinfo', slack: [`${base}/slack`], discord: [`${base}/discord`, `${base}/broken`], logger }),
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
