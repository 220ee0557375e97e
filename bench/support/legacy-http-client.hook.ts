// `node --import` this file into a console server to run it on the previous HTTP client: every import of
// storage/http-client.js resolves to ./legacy-http-client.js (same exports). The console bench starts one server this
// way beside the normal one, so a single run prints both clients' figures (issue 32). Module hooks run on a thread of
// their own, which loads this file again: only the main thread registers them.

import { register, type ResolveHook } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const CURRENT = new URL('../../storage/http-client.js', import.meta.url).href;
const LEGACY = new URL('./legacy-http-client.js', import.meta.url).href;

if (isMainThread) register(import.meta.url);

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  const resolved = await nextResolve(specifier, context);
  return resolved.url === CURRENT ? { ...resolved, url: LEGACY } : resolved;
};
