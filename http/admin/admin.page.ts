// The operator page (docs/DESIGN.md, "Operators see the running system"): plain HTML, CSS and one script from
// http/admin/page/, served as they are (no build step) by the operator listener. The page holds no data,
// so it is served without the admin key; everything it shows comes from the JSON routes, which keep
// requiring `x-api-key` (the page asks for the key once and keeps it in a JS variable only).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpReply } from '../server.js';

/** URL path → file in the page folder, with its content type. */
const PAGE_FILES: ReadonlyArray<readonly [path: string, file: string, type: string]> = [
  ['/', 'index.html', 'text/html; charset=utf-8'],
  ['/operator.css', 'operator.css', 'text/css; charset=utf-8'],
  ['/operator.js', 'operator.js', 'text/javascript; charset=utf-8'],
];

/**
 * Self-contained page: its own script, style and API calls only; no inline code, no framing, no other
 * origin (no CDN), no form posts. DOM-built SVG/HTML needs nothing more.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': PAGE_CSP,
  // The page is tiny and changes with the build; never let a browser or proxy keep a copy.
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The folder of the page files. The compiled module runs from dist/http/admin/, the files stay in the
 * source tree (tsc copies nothing but .ts), so walk up to the repository folder holding `http/admin/page`
 * (the same walk finds it when the sources run directly).
 */
function pageFolder(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 6; level++) {
    const candidate = join(dir, 'http', 'admin', 'page');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

/** The page's replies by URL path, read once (undefined when the page files are not installed). */
export function operatorPage(): ReadonlyMap<string, HttpReply> | undefined {
  const folder = pageFolder();
  if (!folder) return undefined;
  return new Map(
    PAGE_FILES.map(([path, file, type]) => [path, { status: 200, headers: { ...PAGE_HEADERS, 'content-type': type }, body: readFileSync(join(folder, file)) }]),
  );
}
