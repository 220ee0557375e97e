// The proxies whose forwarded client address the files service believes (docs/specs/files-node.md §5).
//
// `trustProxy` takes `false`, one address or CIDR, or a non-empty array of them; `true`, a hop count, names like
// `loopback`, and any range that covers every address (`*`, `0.0.0.0/0`, `::/0`, any /0) are refused. It is
// normalized to a list (`[]` = trust no proxy).

import { isIP } from 'node:net';
import { trustEntryProblem } from './client-address.js';

function proxyEntryProblem(entry: string): string | undefined {
  if (entry === '') return 'must not be empty';
  if (entry.trim() !== entry) return 'must not have surrounding whitespace';
  if (entry.includes(',')) return 'one address or range per entry (use an array, not a comma-separated string)';
  if (entry === '*') return "'*' would trust every forwarded address; list the exact proxy addresses";
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return 'must be an IP address or CIDR range of the proxy (names such as loopback are not accepted)';
  if (slash === -1) return undefined;
  const prefix = entry.slice(slash + 1);
  const maxPrefix = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > maxPrefix) return `has an invalid prefix length (0-${maxPrefix})`;
  if (Number(prefix) === 0) return `'${entry}' covers every address and would trust every forwarded address; list the exact proxy addresses`;
  // The matcher's own reading (e.g. `::ffff:0:0/96` is every IPv4 address): what it refuses is refused here.
  const matcherProblem = trustEntryProblem(entry);
  return matcherProblem === undefined ? undefined : `'${entry}' ${matcherProblem}`;
}

/** `trustProxy` normalized to a list (`[]` = trust no proxy), or undefined when it has a problem. */
export function checkTrustProxy(value: unknown, problems: string[]): string[] | undefined {
  if (value === undefined || value === false) return [];
  if (value === true) {
    problems.push('trustProxy: true is rejected: it would trust every forwarded address; list the exact proxy addresses or CIDR ranges');
    return undefined;
  }
  if (typeof value === 'number') {
    problems.push('trustProxy: a hop count is not accepted; list the exact proxy addresses or CIDR ranges');
    return undefined;
  }
  if (typeof value === 'string') {
    const problem = proxyEntryProblem(value);
    if (problem !== undefined) {
      problems.push(`trustProxy: ${problem}`);
      return undefined;
    }
    return [value];
  }
  if (Array.isArray(value) && value.length > 0) {
    let valid = true;
    value.forEach((entry, index) => {
      const problem = typeof entry === 'string' ? proxyEntryProblem(entry) : 'must be a string';
      if (problem !== undefined) {
        problems.push(`trustProxy[${index}]: ${problem}`);
        valid = false;
      }
    });
    return valid ? [...new Set(value as string[])] : undefined;
  }
  problems.push('trustProxy: must be false, a proxy address or CIDR range, or a non-empty array of them');
  return undefined;
}
