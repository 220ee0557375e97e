// transfers.schema: the gateway's schema cache machine with its catalog queries supplied (machines/transfers/
// schema-cache.machine.ts).

import type { Logger } from 'pino';
import { fromPromise } from 'xstate';
import { schemaCacheMachine, type SchemaCatalog } from '../../machines/transfers/schema-cache.machine.js';
import type { CommonValuesBySchema } from '../../src/transfers/relation-facts.js';
import { listCommonValues, listJsonColumns, listRelations, listSelectiveColumns } from '../../storage/transfers/gateway-store.js';
import type { DatabaseHolder } from './database.actor.js';

/** A relation created while the gateway runs is served within this period (or at once after schema.reload). */
export const SCHEMA_REFRESH_MS = 60_000;

export function schemaCacheLogic(options: { readonly holder: DatabaseHolder; readonly schemas: readonly string[]; readonly logger: Logger }) {
  return schemaCacheMachine.provide({
    actors: {
      loadCatalog: fromPromise<SchemaCatalog>(async () => {
        const { catalog, read } = options.holder.get();
        if (!catalog || !read) throw new Error('the gateway has no database connection');
        const relations = await listRelations(catalog, options.schemas);
        const jsonColumns = await listJsonColumns(catalog, options.schemas);
        // Statistics only tune plans: without them every read is planned for its own values, and still served.
        let commonValues: CommonValuesBySchema = new Map();
        let selectiveColumns: CommonValuesBySchema = new Map();
        try {
          commonValues = await listCommonValues(read, options.schemas);
          selectiveColumns = await listSelectiveColumns(read, options.schemas);
        } catch (error) {
          options.logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'column statistics not readable: every read is planned for its values');
        }
        return { relations, commonValues, jsonColumns, selectiveColumns };
      }),
    },
  });
}
