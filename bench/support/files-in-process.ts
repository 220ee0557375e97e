// The files node's upload path without HTTP, in the bench's own process: the baseline of the small-upload section of
// `npm run bench -- files`. It is the node's own code from below the edge down:
//
// - a real node started as the runtime actor starts it (startFilesNode: helia with libp2p on loopback, the store's
//   FsBlockstore and FsDatastore, the SQLite registry and the root pins), from the same configuration object the
//   bench gives the node process (parsed by parseFilesConfig);
// - the store's owner (storeLogic), which writes every pin, intent and record, as in the node;
// - the content actor (contentLogic) with the node's settings (contentSettings), asked `upload.run` as the upload
//   route asks it: per file, one upload session imports with IMPORTER_SETTINGS (a `has()` per new block for the exact
//   rollback), writes the pin intent, pins the root (helia walks the DAG), commits the record and the intent removal
//   in one SQLite transaction, and builds the replication report (replication is off here as in the node).
//
// Left out, on purpose (they are what HTTP costs, or a hop around the same work): the edge (uWS, the multipart
// parser, admission, rate limits, CORS, the JSON answer), the ask() hop from the edge to the actor, and the disk
// actor: its claim is one statfs of the store, done here without the actor (files.disk books the claim in memory).

import { statfs } from 'node:fs/promises';
import { createActor, type Actor } from 'xstate';
import { storeLogic, storePortOf } from '../../actors/files/store.actor.js';
import { contentLogic, contentSettings, type UploadOutcome, type UploadParts } from '../../actors/files/content.actor.js';
import { NodeHolder, type FilesNode } from '../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../actors/files/runtime.actor.js';
import { systemClock } from '../../src/clock.js';
import { parseFilesConfig } from '../../src/files/config.js';
import { createLogger } from '../../src/logger.js';

export interface InProcessFilesNode {
  /** One upload of one file, as POST /api/file/upload with one part hands it to the content actor; the file's CID. */
  upload(name: string, bytes: Uint8Array): Promise<string>;
  stop(): Promise<void>;
}

/** An upload body of one file whose bytes are already here (what the multipart parser yields for a small part). */
function oneFile(name: string, bytes: Uint8Array): UploadParts {
  return {
    async *[Symbol.asyncIterator]() {
      yield {
        name,
        content: (async function* () {
          yield bytes;
        })(),
      };
    },
    stop: async (reason: Error) => reason,
  };
}

/** Starts the node in `storeDirectory` with `rawConfig` (the node process's config object) and its content actor. */
export async function startInProcessFilesNode(storeDirectory: string, rawConfig: unknown): Promise<InProcessFilesNode> {
  const parsed = parseFilesConfig(rawConfig);
  if (!parsed.ok) throw new Error(`the bench's files config does not parse: ${parsed.problems.join('; ')}`);
  const { config } = parsed;
  // The node logs at the config's level on stdout; at warn nothing is written during the measurements.
  const logger = createLogger({ level: config.logLevel });
  const holder = new NodeHolder();
  const node: FilesNode = await startFilesNode({ storeDirectory, listen: config.peerDiscovery.listen, allow: [], holder, logger });
  holder.set(node);
  let content: Actor<ReturnType<typeof contentLogic>> | undefined;
  // The store's owner, as in the node: every upload's pins, intents and records go through it.
  const owner = createActor(storeLogic({ holder, clock: systemClock, logger }));
  try {
    owner.start();
    content = createActor(
      contentLogic({
        holder,
        clock: systemClock,
        store: storePortOf((event) => owner.send(event)),
        settings: contentSettings(config),
        claimDisk: async () => {
          await statfs(storeDirectory);
          return { release() {} };
        },
        logger,
      }),
    );
    content.start();
  } catch (error) {
    owner.stop();
    holder.set(undefined);
    await stopFilesNode(node);
    throw error;
  }
  const actor = content;
  return {
    async upload(name, bytes) {
      // A signal of its own, as each request has: the session's waits add their abort listeners to it.
      const { signal } = new AbortController();
      const outcome = await new Promise<UploadOutcome>((resolve, reject) =>
        actor.send({ type: 'upload.run', claimBytes: bytes.length, parts: oneFile(name, bytes), reply: { resolve, reject, signal } }),
      );
      const file = outcome.files[0];
      if (file === undefined) throw new Error(`the in-process upload of ${name} stored no file`);
      return file.cid.toString();
    },
    async stop() {
      actor.stop();
      owner.stop();
      holder.set(undefined);
      await stopFilesNode(node);
    },
  };
}
