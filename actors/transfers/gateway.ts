// What the gateway edge reads (DESIGN.md rule 5): the schema cache from the `transfers.schema` snapshot and reads
// through the anonymous-role runner the database actor opened. The PostgREST semantics themselves are pure
// (src/transfers/read.ts); this joins them to the running actors.

import type { SchemaCacheContext } from '../../machines/transfers/schema-cache.machine.js';
import { runRead, type GatewayReply, type ReadRequest, type ReadSettings } from '../../src/transfers/read.js';
import type { Runtime } from '../runtime.js';
import type { DatabaseHolder } from './database.actor.js';

export const TRANSFERS_DB_ID = 'transfers.db';
export const TRANSFERS_INDEXER_ID = 'transfers.indexer';
export const TRANSFERS_SCHEMA_ID = 'transfers.schema';

export interface GatewayView {
  /** Relations of the exposed schema; null before the schema cache first loaded. */
  relations(): readonly string[] | null;
  /** Asks the schema cache to reload (a path it does not know may be a relation created since). */
  reload(): void;
  read(request: ReadRequest): Promise<GatewayReply>;
}

export function gatewayView(runtime: Runtime, holder: DatabaseHolder, settings: ReadSettings): GatewayView {
  let known: readonly string[] | null = null;
  return {
    relations() {
      const snapshot = runtime.registry.lookup(TRANSFERS_SCHEMA_ID)?.getSnapshot() as { context?: SchemaCacheContext } | undefined;
      // Between a crash of the schema actor and its restart the last list read stands in.
      if (snapshot?.context?.relations) known = snapshot.context.relations;
      return known;
    },
    reload() {
      runtime.registry.send(TRANSFERS_SCHEMA_ID, { type: 'schema.reload' });
    },
    read(request) {
      const { read } = holder.get();
      if (!read) throw new Error('the gateway has no database connection');
      return runRead(request, settings, read);
    },
  };
}
