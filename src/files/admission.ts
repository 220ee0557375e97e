// Admission limits (docs/specs/files-node.md §2.5, §7, §8; notes A.9): how many uploads, incoming copies and
// downloads run at once, downloads also per client address. A refusal is a 429 with `Retry-After: 5`,
// told apart from a rate-limit 429 by these counters in node details. In memory, per process.

import type { ConcurrencyMetrics } from './types.js';

export interface AdmissionLimits {
  readonly uploads: number;
  readonly incomingCopies: number;
  readonly downloads: number;
  readonly downloadsPerClient: number;
}

/** Gives back one admitted slot; calling it twice gives back only once. */
export type Release = () => void;

export class AdmissionLimiter {
  #uploads = 0;
  #incomingCopies = 0;
  #downloads = 0;
  readonly #downloadsByClient = new Map<string, number>();

  constructor(readonly limits: AdmissionLimits) {}

  /** A slot for one upload request, or undefined when `limits.uploads` are running. */
  tryUpload(): Release | undefined {
    if (this.#uploads >= this.limits.uploads) return undefined;
    this.#uploads++;
    return once(() => this.#uploads--);
  }

  /** A slot for one incoming replica copy (issue 4's protocol), or undefined at the limit. */
  tryIncomingCopy(): Release | undefined {
    if (this.#incomingCopies >= this.limits.incomingCopies) return undefined;
    this.#incomingCopies++;
    return once(() => this.#incomingCopies--);
  }

  /** A slot for one download of `client`, or undefined at the global or the per-client limit. */
  tryDownload(client: string): Release | undefined {
    const mine = this.#downloadsByClient.get(client) ?? 0;
    if (this.#downloads >= this.limits.downloads || mine >= this.limits.downloadsPerClient) return undefined;
    this.#downloads++;
    this.#downloadsByClient.set(client, mine + 1);
    return once(() => {
      this.#downloads--;
      const left = (this.#downloadsByClient.get(client) ?? 1) - 1;
      // No entry per idle client: the map only holds clients with a download running.
      if (left === 0) this.#downloadsByClient.delete(client);
      else this.#downloadsByClient.set(client, left);
    });
  }

  snapshot(): ConcurrencyMetrics {
    return {
      uploads: { active: this.#uploads, limit: this.limits.uploads },
      incomingCopies: { active: this.#incomingCopies, limit: this.limits.incomingCopies },
      downloads: { active: this.#downloads, limit: this.limits.downloads, perClientLimit: this.limits.downloadsPerClient },
    };
  }
}

function once(release: () => void): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    release();
  };
}

/**
 * The limiter of one node, made once where the node is composed (src/main.ts) and handed to its two users: the edge
 * admits uploads and downloads, the replication actor incoming copies, and node details shows all three from the
 * same counters.
 */
export function nodeAdmission(config: {
  readonly storage: {
    readonly maxConcurrentUploads: number;
    readonly maxConcurrentIncomingCopies: number;
    readonly maxConcurrentDownloads: number;
    readonly maxConcurrentDownloadsPerClient: number;
  };
}): AdmissionLimiter {
  return new AdmissionLimiter({
    uploads: config.storage.maxConcurrentUploads,
    incomingCopies: config.storage.maxConcurrentIncomingCopies,
    downloads: config.storage.maxConcurrentDownloads,
    downloadsPerClient: config.storage.maxConcurrentDownloadsPerClient,
  });
}
