/**
 * A replica's local copy of an index that lives on object storage: the store distributes, the disk
 * serves. Queries against LanceDB on the store take ~47 requests each (issue 20's probe: FTS p50 3 ms
 * on disk, 119 ms against a local S3 server), so a replica copies the index's files to its own disk
 * and LanceDB reads them there.
 *
 * Every file of a LanceDB table is immutable except the version manifests, and a version is visible
 * once its manifest is. So a sync lists the manifests first, copies every other file it lacks, then
 * the new manifests, each through a temporary file renamed into place: LanceDB, looking for the
 * newest manifest, sees the old version or the complete new one, never a half. Files the writer's
 * cleanup removed from the store are removed here GONE_FILE_GRACE_MS after a sync found them gone,
 * so that a query still on the old version does not lose a file under it.
 *
 * While the store is down or hanging, the replica keeps serving the copy it has; the status says how
 * long ago the copy was last known to match the store.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { ObjectStore, type StoredObject } from './object-store.js';
import { PAGES_TABLE } from './schema.js';

export interface MirrorOptions {
  /** The local directory the copy is kept in; LanceDB opens it as an index directory. */
  directory: string;
  /** How often the store is asked for a new version. */
  pollIntervalMs: number;
  /** The deadline of each call to the store. */
  storeTimeoutMs: number;
}

export interface MirrorStatus {
  location: string;
  directory: string;
  /** The newest version in the copy, or null before the first sync. */
  version: number | null;
  /** When that version was committed to the store (its manifest's time), as the store reports it. */
  versionCommittedAtMs: number | null;
  /** The last time the copy was found to match the store, or null if it never was in this process. */
  syncedAtMs: number | null;
  lastError: string | null;
  syncs: { ok: number; failed: number };
  bytesCopied: number;
}

export class IndexUnavailableError extends Error {}

const TABLE_DIRECTORY = `${PAGES_TABLE}.lance`;
const VERSIONS = `${TABLE_DIRECTORY}/_versions/`;
/** Files copied at once: enough to hide a store's latency, few enough not to flood it. */
const COPY_CONCURRENCY = 8;
const PARTIAL_FILE = /\.partial-\d+$/;
/**
 * LanceDB in the replica moves to a new version at its next look (readConsistencyMs, 1 s), and a
 * query started before reads the old one to its end: its files stay this long after the store lost
 * them (the writer's own cleanup waits 3 s for readers of a directory, writer.ts).
 */
const GONE_FILE_GRACE_MS = 5_000;

/**
 * LanceDB names manifests "<version>.manifest", or, in its newer layout, by u64::MAX minus the version
 * (20 digits) so that a listing in key order starts with the newest.
 */
export function manifestVersion(key: string): number | null {
  const match = /(\d+)\.manifest$/.exec(key);
  if (!match) return null;
  const number = BigInt(match[1]!);
  return Number(match[1]!.length === 20 ? 0xffff_ffff_ffff_ffffn - number : number);
}

export class IndexMirror {
  private syncedAtMs: number | null = null;
  private lastError: string | null = null;
  private version: number | null = null;
  private versionCommittedAtMs: number | null = null;
  private readonly syncs = { ok: 0, failed: 0 };
  private bytesCopied = 0;
  /** Files of the copy that a sync found gone from the store, and when. */
  private readonly goneSince = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<boolean> | null = null;
  private closed = false;

  constructor(
    readonly location: string,
    private readonly store: ObjectStore,
    private readonly options: MirrorOptions,
    private readonly onError: (message: string) => void = () => {},
  ) {}

  /**
   * Brings the copy up to date once. Resolves true when a new version came in; rejects only when the
   * store failed and the directory holds no version at all (nothing to serve).
   */
  async start(): Promise<boolean> {
    const changed = await this.sync();
    if (this.version === null) {
      this.version = await this.localVersion();
      if (this.version === null) {
        throw new IndexUnavailableError(
          this.lastError
            ? `the index at ${this.location} cannot be read (${this.lastError}) and this replica has no copy of it yet in ${this.options.directory}`
            : `the index at ${this.location} has no pages table yet: build it with \`searchgate index add --dir ${this.location}\``,
        );
      }
    }
    this.timer = setInterval(() => void this.sync(), this.options.pollIntervalMs);
    this.timer.unref();
    return changed;
  }

  /** One sync, never two at once; a failure is kept in the status and reported, not thrown. */
  sync(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.running ??= this.syncOnce()
      .then((changed) => {
        this.syncs.ok++;
        this.syncedAtMs = Date.now();
        this.lastError = null;
        return changed;
      })
      .catch((error: unknown) => {
        this.syncs.failed++;
        this.lastError = error instanceof Error ? error.message : String(error);
        this.onError(this.lastError);
        return false;
      })
      .finally(() => (this.running = null));
    return this.running;
  }

  status(): MirrorStatus {
    return {
      location: this.location,
      directory: this.options.directory,
      version: this.version,
      versionCommittedAtMs: this.versionCommittedAtMs,
      syncedAtMs: this.syncedAtMs,
      lastError: this.lastError,
      syncs: { ...this.syncs },
      bytesCopied: this.bytesCopied,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    this.store.close();
  }

  private async syncOnce(): Promise<boolean> {
    // Manifests first: every file a listed manifest names was in the store before it, so the listing
    // of the other files that follows includes them all.
    // Only manifests: LanceDB's latest_version_hint.json beside them is rewritten in place, and a
    // copy of it could name a version whose manifest is not here yet; without it LanceDB lists them.
    const manifests = (await this.store.list(VERSIONS)).filter((object) => manifestVersion(object.key) !== null);
    const local = await this.localFiles();
    const newest = newestManifest(manifests);
    const served = () => {
      this.version = newest ? manifestVersion(newest.key) : null;
      this.versionCommittedAtMs = newest?.modifiedMs ?? null;
    };
    const localManifests = [...local.keys()].filter((key) => key.startsWith(VERSIONS) && !this.goneSince.has(key));
    if (manifests.every((object) => local.get(object.key) === object.size) && manifests.length === localManifests.length) {
      await this.removeGoneFiles();
      served();
      return false;
    }
    const files = (await this.store.list(`${TABLE_DIRECTORY}/`)).filter((object) => !object.key.startsWith(VERSIONS));
    const missing = (objects: StoredObject[]) => objects.filter((object) => local.get(object.key) !== object.size);
    await this.copy(missing(files));
    await this.copy(missing(manifests));
    const inStore = new Set([...files, ...manifests].map((object) => object.key));
    for (const key of local.keys()) {
      if (!inStore.has(key) && !this.goneSince.has(key)) this.goneSince.set(key, Date.now());
    }
    await this.removeGoneFiles();
    served();
    return true;
  }

  private async removeGoneFiles(): Promise<void> {
    for (const [key, since] of this.goneSince) {
      if (Date.now() - since < GONE_FILE_GRACE_MS) continue;
      await rm(join(this.options.directory, ...key.split('/')), { force: true });
      this.goneSince.delete(key);
    }
  }

  private async copy(objects: StoredObject[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < objects.length) {
        const object = objects[next++]!;
        // Not `+= await`: that reads the total before the download, and the lanes' sums overwrite each other.
        const bytes = await this.store.download(object.key, join(this.options.directory, ...object.key.split('/')));
        this.bytesCopied += bytes;
      }
    };
    await Promise.all(Array.from({ length: Math.min(COPY_CONCURRENCY, objects.length) }, lane));
  }

  /** The copy's files (key → size), with no half-copied file among them. */
  private async localFiles(): Promise<Map<string, number>> {
    const files = new Map<string, number>();
    let entries;
    try {
      entries = await readdir(this.options.directory, { withFileTypes: true, recursive: true });
    } catch {
      return files;
    }
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      if (PARTIAL_FILE.test(entry.name)) {
        await rm(path, { force: true });
        continue;
      }
      files.set(relative(this.options.directory, path).split(sep).join('/'), (await stat(path)).size);
    }
    return files;
  }

  private async localVersion(): Promise<number | null> {
    const versions = [...(await this.localFiles()).keys()].filter((key) => key.startsWith(VERSIONS)).map(manifestVersion);
    return versions.reduce<number | null>((newest, version) => (version !== null && (newest === null || version > newest) ? version : newest), null);
  }
}

function newestManifest(manifests: StoredObject[]): StoredObject | undefined {
  return manifests.reduce<StoredObject | undefined>((newest, object) => (!newest || manifestVersion(object.key)! > manifestVersion(newest.key)! ? object : newest), undefined);
}
