// Configuration loading shared by every service (docs/DESIGN.md, "Configuration and logs"):
// read JSON/JSONC/JSON5 once, validate against a TypeBox schema reporting every problem at once,
// then freeze. Each service owns its schema (src/<service>/config-schema.ts), its semantic checks
// (src/<service>/config.ts and config-*.ts) and its file lookup and loading (src/<service>/config-file.ts).

import { readFileSync } from 'node:fs';
import JSON5 from 'json5';
import { Compile, Settings, type TSchema } from './typebox.js';
import { ConfigError } from './errors.js';

export { isRecord, type Loose } from './is-record.js';

/** Reads a configuration file in JSON, JSONC or JSON5 (comments and trailing commas allowed). */
export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT' ? `No config found at '${path}'. Cannot start the app.` : `Cannot read config '${path}': ${code ?? String(error)}`,
    );
  }
  try {
    return JSON5.parse(text);
  } catch (error) {
    // json5's messages carry line and column ("JSON5: invalid character 'x' at 3:5") and never file content beyond one char.
    throw new ConfigError(`Config '${path}' is not valid JSON5: ${(error as Error).message}`);
  }
}

/** `/a/b/0` → `a.b[0]`; the root is `(root)`. */
export function formatPath(instancePath: string): string {
  if (instancePath === '') return '(root)';
  return instancePath
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc === '' ? part : `${acc}.${part}`), '');
}

const compiled = new WeakMap<TSchema, ReturnType<typeof Compile>>();

/**
 * TypeBox stops collecting after `Settings.maxErrors` (8 by default); "every problem at once" needs more.
 * Still bounded: the input is an operator's file, but a huge broken one must not buffer without limit.
 */
export const MAX_CONFIG_PROBLEMS = 500;

/** Every schema problem of `value`, one `path: message` line each, in document order. */
export function schemaProblems(schema: TSchema, value: unknown): string[] {
  let validator = compiled.get(schema);
  if (!validator) {
    validator = Compile(schema);
    compiled.set(schema, validator);
  }
  if (validator.Check(value)) return [];
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: MAX_CONFIG_PROBLEMS });
  let errors;
  try {
    errors = validator.Errors(value);
  } finally {
    Settings.Set({ maxErrors: previous });
  }
  const lines: string[] = [];
  for (const error of errors) {
    // `additionalProperties: false` reports each extra key twice (a `boolean` "schema is false" on the key,
    // then one on the object); keep the object-level one and name the keys.
    if (error.keyword === 'boolean') continue;
    if (error.keyword === 'additionalProperties') {
      const keys = (error.params as { additionalProperties?: string[] }).additionalProperties ?? [];
      for (const key of keys) lines.push(`${formatPath(`${error.instancePath}/${key}`)}: unknown key (not part of the configuration format)`);
      continue;
    }
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue; // the branch errors say more
    lines.push(`${formatPath(error.instancePath)}: ${error.message}`);
  }
  return [...new Set(lines)];
}

/** Freezes a parsed configuration so no actor can change it after startup. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}

/** The HTTP engines a listener can ask for (http/engine.ts): uWebSockets.js or node:http. */
export const HTTP_ENGINES = ['uws', 'node'] as const;
export type HttpEngineName = (typeof HTTP_ENGINES)[number];

/** The problem with an engine setting named `key`, or undefined when it is absent or valid. */
export function httpEngineProblem(key: string, value: unknown): string | undefined {
  if (value === undefined || (HTTP_ENGINES as readonly unknown[]).includes(value)) return undefined;
  return `${key}: must be one of ${HTTP_ENGINES.join(', ')}`;
}

/**
 * Where a service's settings came from, for its one startup line and the `--check-config` report: the file
 * read, or the places looked at (in order) and what stands in when none held a file.
 */
export interface ConfigOrigin {
  readonly file: string | undefined;
  /** The lookup that found nothing; undefined under `adm-infra all`, which reads no file. */
  readonly lookup: string | undefined;
  /** What is used without a file ("the embedded defaults"). */
  readonly defaults: string;
}

/** A service's validated configuration and where it came from: what every `load<Service>Config` returns. */
export interface LoadedConfig<C> {
  readonly config: C;
  /** The file, else a parenthesised name of the defaults. */
  readonly source: string;
  readonly origin: ConfigOrigin;
  readonly warnings: readonly string[];
}

/** What every service's parser answers: the frozen configuration and its warnings, or every problem. */
export type ParsedConfig<C> = { readonly ok: true; readonly config: C; readonly warnings?: readonly string[] } | { readonly ok: false; readonly problems: readonly string[] };

/** The end of every `load<Service>Config`: the parser's problems as one ConfigError (`invalid` heads it), else the load. */
export function loadedConfig<C>(result: ParsedConfig<C>, invalid: string, origin: ConfigOrigin, source: string): LoadedConfig<C> {
  if (!result.ok) throw new ConfigError(invalid, result.problems, origin.file);
  return { config: result.config, source, origin, warnings: result.warnings ?? [] };
}

/** The options every `load<Service>Config` takes. */
export interface ConfigLoadOptions {
  /**
   * Where relative paths and the working-directory lookup start. Without it, rates and files resolve against the
   * process's working directory; transfers and the console keep a relative --config path as written.
   */
  readonly cwd?: string;
  /** `adm-infra all`: read no file, use the embedded defaults. */
  readonly useDefaults?: boolean;
}
