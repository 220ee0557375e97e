// transfers.schema: the gateway's schema cache machine with its catalog query supplied (machines/transfers/
// schema-cache.machine.ts).

import { fromPromise } from 'xstate';
import { schemaCacheMachine, type RelationsBySchema } from '../../machines/transfers/schema-cache.machine.js';
import { listRelations } from '../../storage/transfers/gateway-store.js';
import type { DatabaseHolder } from './database.actor.js';

/** A relation created while the gateway runs is served within this period (or at once after schema.reload). */
export const SCHEMA_REFRESH_MS = 60_000;

export function schemaCacheLogic(options: { readonly holder: DatabaseHolder; readonly schemas: readonly string[] }) {
  return schemaCacheMachine.provide({
    actors: {
      loadRelations: fromPromise<RelationsBySchema>(async () => {
        const { catalog } = options.holder.get();
        if (!catalog) throw new Error('the gateway has no database connection');
        return listRelations(catalog, options.schemas);
      }),
    },
  });
}
