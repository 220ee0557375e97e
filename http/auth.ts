// Admin-key checks shared by every listener that has operator routes: fail closed (503) when no key is
// configured, 401 on a wrong key, and a constant-time comparison (both sides hashed first, so neither the
// key's length nor its prefix leaks through timing).

import { createHash, timingSafeEqual } from 'node:crypto';

/** Admin keys shorter than this are refused at startup. */
export const MIN_ADMIN_KEY_LENGTH = 32;

export type KeyCheck = 'ok' | 'notConfigured' | 'wrongKey';

export function checkAdminKey(provided: string | undefined, configured: string | undefined): KeyCheck {
  if (!configured) return 'notConfigured';
  if (provided === undefined) return 'wrongKey';
  const a = createHash('sha256').update(provided).digest();
  const b = createHash('sha256').update(configured).digest();
  return timingSafeEqual(a, b) ? 'ok' : 'wrongKey';
}

/** The refusal for a request without the right key (503 fail-closed, else 401), or undefined when allowed. */
export function adminRefusal(provided: string | undefined, configured: string | undefined): { status: 401 | 503; error: string } | undefined {
  const check = checkAdminKey(provided, configured);
  if (check === 'notConfigured') return { status: 503, error: 'Service not configured' };
  if (check === 'wrongKey') return { status: 401, error: 'Unauthorized' };
  return undefined;
}
