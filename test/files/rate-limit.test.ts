// Fixed-window rate limits with an injected clock (docs/specs/files-node.md §8; notes A.9, C23).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FixedWindowRateLimiter, rateLimitHeaders } from '../../src/files/rate-limit.js';

function limiter(limit: number, windowMs: number, maxKeys?: number) {
  const clock = { t: 1_000_000 };
  const rate = new FixedWindowRateLimiter({ windowMs, limit }, () => clock.t, { name: 'upload', maxKeys });
  return { rate, clock };
}

describe('FixedWindowRateLimiter', () => {
  it('lets `limit` requests pass in a window and refuses the next with the seconds left', () => {
    const { rate, clock } = limiter(3, 60_000);
    assert.deepEqual(
      [1, 2, 3].map(() => rate.hit('a').remaining),
      [2, 1, 0],
    );
    clock.t += 20_500;
    const refused = rate.hit('a');
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.equal(refused.resetSeconds, 40, 'ceil(39.5 s)');
    assert.equal(rate.hit('b').allowed, true, 'each client has its own window');
  });

  it('the window opens at the first request and reopens exactly when it closes', () => {
    const { rate, clock } = limiter(1, 10_000);
    assert.equal(rate.hit('a').allowed, true);
    clock.t += 9_999;
    const last = rate.hit('a');
    assert.equal(last.allowed, false);
    assert.equal(last.resetSeconds, 1, 'never 0 while refused');
    clock.t += 1;
    const fresh = rate.hit('a');
    assert.equal(fresh.allowed, true);
    assert.equal(fresh.resetSeconds, 10);
  });

  it('refused requests do not move the reset later', () => {
    const { rate, clock } = limiter(1, 10_000);
    rate.hit('a');
    for (let i = 0; i < 50; i++) {
      clock.t += 100;
      assert.equal(rate.hit('a').allowed, false);
    }
    clock.t += 5_000;
    assert.equal(rate.hit('a').allowed, true, 'the window closed 10 s after the first request');
  });

  it('sweeps closed windows, so memory follows the active clients', () => {
    const { rate, clock } = limiter(5, 1_000);
    for (let i = 0; i < 100; i++) rate.hit(`client-${i}`);
    assert.equal(rate.trackedKeys, 100);
    clock.t += 1_000;
    rate.hit('late');
    assert.equal(rate.trackedKeys, 1);
  });

  it('at the cap the oldest window is dropped and that client starts afresh', () => {
    const { rate, clock } = limiter(1, 60_000, 3);
    for (const key of ['a', 'b', 'c']) {
      rate.hit(key);
      clock.t += 10;
    }
    assert.equal(rate.hit('a').allowed, false);
    assert.equal(rate.hit('d').allowed, true);
    assert.equal(rate.trackedKeys, 3);
    assert.equal(rate.hit('b').allowed, false, 'b kept its window');
    assert.equal(rate.hit('a').allowed, true, 'a, the oldest, was forgotten');
  });

  it('a clock that goes back never blocks a client beyond one window', () => {
    const { rate, clock } = limiter(1, 60_000);
    rate.hit('a');
    clock.t -= 3_600_000;
    const after = rate.hit('a');
    assert.equal(after.allowed, true, 'the window that opened "in the future" is closed');
    assert.ok(after.resetSeconds <= 60);
  });
});

describe('rateLimitHeaders', () => {
  it('writes the draft-8 fields', () => {
    const { rate } = limiter(10, 900_000);
    const decision = rate.hit('a');
    assert.deepEqual(rateLimitHeaders('upload', rate.policy, decision), {
      'ratelimit-policy': '"upload"; q=10; w=900',
      ratelimit: '"upload"; r=9; t=900',
    });
  });
});
