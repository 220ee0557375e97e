// Driving the operator page's key form in Chromium (test/acceptance/operator-page.test.ts and statecharts-page.test.ts).
// The form is never submitted to the server: the page's script takes the submit event, keeps the key in a variable and
// sends it only in the x-api-key header. So after the click there is no navigation to wait for, and Playwright's wait
// for "scheduled navigations" is skipped (`noWaitAfter`): on a loaded CI machine that wait once ran out its 30 s with
// no navigation logged. What the page did instead is recorded from the page's start, and checked: no navigation (a
// navigation would put the key in the URL), no script error. A failure prints the record.

import assert from 'node:assert/strict';
import type { Frame, Page, Request } from 'playwright-core';

/** What a page did that a key submit must not cause, recorded from when the watch starts. */
export class OperatorPageWatch {
  readonly #events: string[] = [];
  readonly #navigations: string[] = [];
  readonly #errors: string[] = [];

  constructor(readonly page: Page) {
    page.on('framenavigated', (frame: Frame) => {
      if (frame !== page.mainFrame()) return;
      this.#navigations.push(frame.url());
      this.#note(`navigated to ${frame.url()}`);
    });
    page.on('pageerror', (error: Error) => {
      this.#errors.push(error.message);
      this.#note(`script error: ${error.message}`);
    });
    page.on('requestfailed', (request: Request) => this.#note(`request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText ?? '?'}`));
  }

  /**
   * Types the key, submits the form and waits until `until` is on the page. Fails, with the page's record, when the
   * submit navigated or raised a script error.
   */
  async submitKey(key: string, until: string, timeoutMs = 15_000): Promise<void> {
    const navigations = this.#navigations.length;
    const errors = this.#errors.length;
    await this.page.fill('#key', key);
    try {
      await this.page.click('#key-form button[type=submit]', { noWaitAfter: true });
      await this.page.waitForSelector(until, { timeout: timeoutMs });
    } catch (error) {
      throw new Error(`${(error as Error).message}\nwhat the page did: ${this.record()}`);
    }
    assert.deepEqual(this.#navigations.slice(navigations), [], `the key form never navigates (the key stays out of URLs); ${this.record()}`);
    assert.deepEqual(this.#errors.slice(errors), [], `no script error on submit; ${this.record()}`);
  }

  /** The page's recorded events, oldest first, for a failure message. */
  record(): string {
    return this.#events.length === 0 ? 'nothing recorded' : this.#events.join('; ');
  }

  #note(event: string): void {
    this.#events.push(`${new Date().toISOString().slice(11, 23)} ${event}`);
    if (this.#events.length > 50) this.#events.shift();
  }
}
