// GET /api/storage/policy (docs/specs/files-node.md §2.7; notes C12 shapes, E49): the limits and durability
// settings a client can rely on, straight from the configuration.

import type { FilesConfig } from './config.js';

export interface StoragePolicy {
  readonly maxFileCount: number;
  readonly uploadLimitSizeBytes: number;
  readonly maxRequestSizeBytes: number;
  readonly maxConcurrentUploads: number;
  readonly maxConcurrentDownloads: number;
  readonly maxConcurrentDownloadsPerClient: number;
  readonly confirmationRequired: boolean;
  readonly temporaryTtlMs: number;
  readonly durability: {
    readonly mode: 'quorum' | 'best-effort';
    readonly placement: ReadonlyArray<{ minAgeMs: number; copies: number }>;
    readonly ackQuorum: number;
  };
}

export function storagePolicy(config: FilesConfig): StoragePolicy {
  const replicated = config.replication.enabled;
  return {
    maxFileCount: config.maxFileCount,
    uploadLimitSizeBytes: config.uploadLimitSizeBytes,
    maxRequestSizeBytes: config.storage.maxRequestSizeBytes,
    maxConcurrentUploads: config.storage.maxConcurrentUploads,
    maxConcurrentDownloads: config.storage.maxConcurrentDownloads,
    maxConcurrentDownloadsPerClient: config.storage.maxConcurrentDownloadsPerClient,
    confirmationRequired: config.storage.confirmationRequired,
    temporaryTtlMs: config.storage.temporaryTtlMs,
    // notes C12: with replication off the node keeps one copy and acknowledges alone.
    durability: replicated
      ? { mode: 'quorum', placement: config.replication.placement.map((tier) => ({ minAgeMs: tier.minAgeMs, copies: tier.copies })), ackQuorum: config.replication.ackQuorum }
      : { mode: 'best-effort', placement: [{ minAgeMs: 0, copies: 1 }], ackQuorum: 1 },
  };
}
