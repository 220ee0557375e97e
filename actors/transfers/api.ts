// The transfers service's API for its edge (docs/DESIGN.md rule 5): the schema cache from the `transfers.schema` snapshot,
// and reads on the reader pool the database actor (`transfers.db`) owns, as the anonymous role, with the request's
// cancellation: a client that goes away cancels its statement on the server. The PostgREST semantics themselves are
// pure (src/transfers/read.ts); this joins them to the running actors.

import type { RelationsBySchema, SchemaCacheContext } from '../../machines/transfers/schema-cache.machine.js';
import { GatewayError } from '../../src/transfers/gateway-errors.js';
import { runRead, type GatewayReply, type ReadRequest, type ReadSettings } from '../../src/transfers/read.js';
import type { Runtime } from '../runtime.js';
import type { DatabaseHolder } from './database.actor.js';

export const TRANSFERS_DB_ID = 'transfers.db';
export const TRANSFERS_INDEXER_ID = 'transfers.indexer';
export const TRANSFERS_SCHEMA_ID = 'transfers.schema';

export interface TransfersApi {
  /** Relations of each exposed schema; null before the schema cache first loaded. */
  relations(): RelationsBySchema | null;
  /** Asks the schema cache to reload (a path it does not know may be a relation created since). */
  reload(): void;
  read(request: ReadRequest): Promise<GatewayReply>;
}

export function transfersApi(runtime: Runtime, holder: DatabaseHolder, settings: ReadSettings): TransfersApi {
  let known: RelationsBySchema | null = null;
  const schemaCache = () => (runtime.registry.lookup(TRANSFERS_SCHEMA_ID)?.getSnapshot() as { context?: SchemaCacheContext } | undefined)?.context;
  return {
    relations() {
      // Between a crash of the schema actor and its restart the last list read stands in.
      const relations = schemaCache()?.relations;
      if (relations) known = relations;
      return known;
    },
    reload() {
      runtime.registry.send(TRANSFERS_SCHEMA_ID, { type: 'schema.reload' });
    },
    read(request) {
      // notes F.7: no database (reopening after a failure) is PostgREST's connection error, 503, not a 500.
      let read;
      try {
        read = holder.get().read;
      } catch {
        read = undefined;
      }
      if (!read) throw new GatewayError({ status: 503, code: 'PGRST001', message: 'Database client error. Retrying the connection.', details: null, hint: null });
      // Without the schema actor (restarting) no common values: the read is planned for its values.
      const cache = schemaCache();
      const commonValues = cache?.commonValues.get(request.schema)?.get(request.relation);
      const jsonColumns = cache?.jsonColumns.get(request.schema)?.get(request.relation);
      const selectiveColumns = cache?.selectiveColumns.get(request.schema)?.get(request.relation);
      return runRead(request, settings, read, { commonValues, jsonColumns, selectiveColumns });
    },
  };
}
