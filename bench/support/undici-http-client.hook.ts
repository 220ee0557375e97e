// `node --import` this file into a console server to run it on undici: every import of storage/http-client.js resolves
// to ./undici-http-client.js (same exports, same contract: storage/http-exchange.ts). The console bench starts one
// server this way beside the normal one, so a single run prints both clients' figures (issue 32). Module hooks run on
// a thread of their own, which loads this file again: only the main thread registers them.

import { register, type ResolveHook } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const SHIPPED = new URL('../../storage/http-client.js', import.meta.url).href;
const UNDICI = new URL('./undici-http-client.js', import.meta.url).href;

if (isMainThread) register(import.meta.url);

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  const resolved = await nextResolve(specifier, context);
  return resolved.url === SHIPPED ? { ...resolved, url: UNDICI } : resolved;
};
