// What the gateway's schema cache knows of a relation beyond its name (storage/transfers/gateway-store.ts):
// - its columns' most common values (PostgreSQL's pg_stats most_common_vals, at most the column's statistics target):
//   read-sql.ts writes a filter value found here as a literal, so a skewed value is planned for what it is while the
//   others share one generic plan;
// - which of its columns are selective (one value is at most a small share of the rows in PostgreSQL's generic
//   estimate), each with its heavy values (common values above that share): an equality with any other value bounds
//   a read (read-sql.ts anchoredByEquality);
// - which of its columns are json or jsonb: JSON arrows apply to those as they are, and to any other column through
//   to_jsonb(), as PostgREST does (Plan.hs resolveTypeOrUnknown: "other types will get converted, even unknown").

/** Column → its most common values, lowercased (citext compares ignoring case; for other types a miss only costs a plan). */
export type ColumnCommonValues = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * Schema → relation → its columns' common values. A relation is listed once PostgreSQL has statistics on it that the
 * reading role may see; a relation that is not listed (a view, a table never analyzed, statistics hidden by row level
 * security) is read with a plan made for each request's values.
 */
export type CommonValuesBySchema = ReadonlyMap<string, ReadonlyMap<string, ColumnCommonValues>>;

export interface CommonValueRow {
  readonly schema: string;
  readonly relation: string;
  readonly column: string;
  /** null for a column with statistics but no common values (all values about equally frequent). */
  readonly value: string | null;
}

/** `map`'s entry for `key`, made by `create` the first time. */
function entry<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = create()));
  return value;
}

export function groupCommonValues(rows: Iterable<CommonValueRow>): CommonValuesBySchema {
  const bySchema = new Map<string, Map<string, Map<string, Set<string>>>>();
  for (const { schema, relation, column, value } of rows) {
    const values = entry(entry(entry(bySchema, schema, () => new Map()), relation, () => new Map()), column, () => new Set<string>());
    if (value !== null) values.add(value.toLowerCase());
  }
  return bySchema;
}

/** Schema → relation → its json and jsonb columns. */
export type JsonColumnsBySchema = ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;

/** What a read of one relation is written with; each part absent when the schema cache has none for it. */
export interface RelationFacts {
  readonly commonValues?: ColumnCommonValues;
  /** Its json/jsonb columns; absent: every column is taken as another type (wrapped for arrows). */
  readonly jsonColumns?: ReadonlySet<string>;
  /** Its selective columns with their heavy values; absent: none known, so no read is run with a forced generic plan. */
  readonly selectiveColumns?: ColumnCommonValues;
}

export function groupColumns(rows: Iterable<{ readonly schema: string; readonly relation: string; readonly column: string }>): JsonColumnsBySchema {
  const bySchema = new Map<string, Map<string, Set<string>>>();
  for (const { schema, relation, column } of rows) entry(entry(bySchema, schema, () => new Map()), relation, () => new Set<string>()).add(column);
  return bySchema;
}
