// Cross-origin resource sharing for a listener (files: docs/specs/files-node.md §5, notes B.6 `cors.allowedOrigins`).
// The ADAMANT web messenger is a browser app on another origin: without these headers the browser refuses to hand
// it any answer, and without a preflight answer it never sends an upload or an `x-api-key` request at all.
//
// Origins are matched exactly as the browser sends them (`scheme://host[:port]`): an exact origin, a subdomain
// wildcard `scheme://*.suffix` (any depth, never the bare suffix), or `*` alone for every origin. Credentials are
// never allowed (the admin key travels in a header, not a cookie), so `*` can be answered literally.

export interface CorsOptions {
  /** `['*']` = every origin; otherwise exact origins and `scheme://*.suffix` wildcards (validated by the config). */
  readonly allowedOrigins: readonly string[];
  /** Methods a preflight allows. */
  readonly methods: readonly string[];
  /** Request headers a preflight allows (beyond the CORS-safelisted ones). */
  readonly allowHeaders: readonly string[];
  /** Response headers a page may read beyond the CORS-safelisted ones. */
  readonly exposeHeaders: readonly string[];
  /** How long a browser may cache a preflight answer. */
  readonly maxAgeSeconds: number;
}

export type HeaderList = ReadonlyArray<readonly [string, string]>;

const NONE: HeaderList = [];

export class CorsPolicy {
  readonly #any: boolean;
  readonly #exact: ReadonlySet<string>;
  /** Wildcards as [scheme + '//', '.' + suffix]: `https://*.example.org` → ['https://', '.example.org']. */
  readonly #wildcards: ReadonlyArray<readonly [string, string]>;
  /** Headers of a simple answer to an allowed origin, besides the origin itself (worked out once). */
  readonly #answerHeaders: HeaderList;
  readonly #preflightHeaders: HeaderList;

  constructor(options: CorsOptions) {
    this.#any = options.allowedOrigins.includes('*');
    this.#exact = new Set(options.allowedOrigins.filter((entry) => !entry.includes('*')));
    this.#wildcards = options.allowedOrigins
      .filter((entry) => entry.includes('://*.'))
      .map((entry) => {
        const at = entry.indexOf('*');
        return [entry.slice(0, at), entry.slice(at + 1)] as const;
      });
    // An answer that depends on the Origin header must say so, or a shared cache hands one origin's answer to another.
    const vary: HeaderList = this.#any ? [] : [['vary', 'Origin']];
    this.#answerHeaders = [...vary, ['access-control-expose-headers', options.exposeHeaders.join(', ')]];
    this.#preflightHeaders = [
      ...vary,
      ['access-control-allow-methods', options.methods.join(', ')],
      ['access-control-allow-headers', options.allowHeaders.join(', ')],
      ['access-control-max-age', String(options.maxAgeSeconds)],
    ];
  }

  /** Whether a page of `origin` may read this listener's answers. */
  allows(origin: string): boolean {
    if (this.#any) return true;
    if (this.#exact.has(origin)) return true;
    for (const [prefix, suffix] of this.#wildcards) {
      // At least one label before the suffix, and nothing that would make it a path or a port of another host.
      if (origin.length > prefix.length + suffix.length && origin.startsWith(prefix) && origin.endsWith(suffix)) {
        const label = origin.slice(prefix.length, origin.length - suffix.length);
        if (/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(label)) return true;
      }
    }
    return false;
  }

  /** Headers for an answer to a request carrying `origin` (empty when there is none or it is not allowed). */
  answerHeaders(origin: string): HeaderList {
    if (!origin || !this.allows(origin)) return NONE;
    return [['access-control-allow-origin', this.#any ? '*' : origin], ...this.#answerHeaders];
  }

  /**
   * Headers for a preflight (OPTIONS with `Access-Control-Request-Method`). A refused origin gets none, which is how
   * a browser learns it is refused; the status stays 204 either way, as the original's express `cors` answered.
   */
  preflightHeaders(origin: string): HeaderList {
    if (!origin || !this.allows(origin)) return NONE;
    return [['access-control-allow-origin', this.#any ? '*' : origin], ...this.#preflightHeaders];
  }
}
