/**
 * One writer per index on object storage. LanceDB commits a version by creating its manifest with a
 * conditional PUT (If-None-Match: *): on a store that honours it, two writers that race for the
 * same version are told, and the loser retries, so any number of writers is safe. On a store that
 * ignores it, the second commit silently overwrites the first (issue 20's probe lost commits on
 * s3rver). So a writer first asks the store itself; where the store does not honour the condition,
 * it holds a lease object, renewed while it writes, and a second writer is refused while the lease
 * is fresh.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ObjectStore } from './object-store.js';

export class WriterRefusedError extends Error {}

export interface WriterClaim {
  /** Whether the store refuses a second creation of an object, which makes LanceDB's commits safe. */
  conditionalPut: boolean;
  release(): Promise<void>;
}

interface Lease {
  owner: string;
  host: string;
  pid: number;
  since: string;
  expiresAtMs: number;
}

const LEASE_KEY = '_searchgate/writer-lease.json';
export const DEFAULT_LEASE_MS = 60_000;

/** Creates a probe object twice: a store that honours If-None-Match refuses the second. */
export async function honoursConditionalPut(store: ObjectStore): Promise<boolean> {
  const probe = `_searchgate/conditional-put-probe-${randomUUID()}`;
  try {
    if (!(await store.create(probe, 'probe'))) return false;
    return !(await store.create(probe, 'probe'));
  } finally {
    await store.delete(probe).catch(() => undefined);
  }
}

export async function claimWriter(store: ObjectStore, location: string, leaseMs = DEFAULT_LEASE_MS): Promise<WriterClaim> {
  if (await honoursConditionalPut(store)) return { conditionalPut: true, release: async () => {} };
  const owner = randomUUID();
  const held = parseLease(await store.read(LEASE_KEY));
  if (held && held.expiresAtMs > Date.now()) {
    throw new WriterRefusedError(
      `${location}: another writer (${held.host}, pid ${held.pid}, since ${held.since}) is writing this index, and this store does not ` +
        'honour conditional PUT (If-None-Match), so two writers would lose each other\'s commits. Wait for it to finish, or, if it ' +
        `died, for its lease to expire (${Math.ceil((held.expiresAtMs - Date.now()) / 1000)} s).`,
    );
  }
  const since = new Date().toISOString();
  const lease = (): Lease => ({ owner, host: hostname(), pid: process.pid, since, expiresAtMs: Date.now() + leaseMs });
  await store.write(LEASE_KEY, JSON.stringify(lease()));
  const renewal = setInterval(() => void store.write(LEASE_KEY, JSON.stringify(lease())).catch(() => undefined), Math.max(1000, leaseMs / 3));
  renewal.unref();
  return {
    conditionalPut: false,
    async release() {
      clearInterval(renewal);
      const current = parseLease(await store.read(LEASE_KEY).catch(() => null));
      if (current?.owner === owner) await store.delete(LEASE_KEY).catch(() => undefined);
    },
  };
}

function parseLease(text: string | null): Lease | null {
  if (!text) return null;
  try {
    const lease = JSON.parse(text) as Partial<Lease>;
    return typeof lease.owner === 'string' && typeof lease.expiresAtMs === 'number' ? (lease as Lease) : null;
  } catch {
    return null;
  }
}
