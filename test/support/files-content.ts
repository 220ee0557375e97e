// A download through the content actor alone (actors/files/content.actor.ts), as GET /api/file/{cid} asks it: for
// the actor tests that run a real node without its HTTP edge.

import type { CID } from 'multiformats/cid';
import { createActor } from 'xstate';
import { systemClock } from '../../src/clock.js';
import { contentLogic, type ContentSettings, type OpenedContent } from '../../actors/files/content.actor.js';
import type { NodeHolder } from '../../actors/files/node.js';
import { startStore } from './files-store.js';
import { captureLogger } from './logger.js';

/** Opens `cid` on the node `holder` holds and reads all its bytes; the actor and its store owner are stopped after. */
export async function downloadThroughContent(holder: NodeHolder, cid: CID, settings: ContentSettings): Promise<Buffer> {
  const owner = startStore(holder);
  const content = createActor(contentLogic({ holder, clock: systemClock, store: owner.port, settings, claimDisk: async () => ({ release() {} }), logger: captureLogger('warn').logger }));
  content.start();
  try {
    const signal = new AbortController().signal;
    const opened = await new Promise<OpenedContent>((resolve, reject) => content.send({ type: 'content.open', cid, reply: { resolve, reject, signal } }));
    const chunks: Uint8Array[] = [];
    for await (const chunk of opened.chunks(signal)) chunks.push(chunk);
    return Buffer.concat(chunks);
  } finally {
    content.stop();
    owner.stop();
  }
}
