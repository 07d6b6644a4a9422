/**
 * The few object-store calls searchgate makes itself, beside LanceDB's own: listing and copying an
 * index's files for a replica's mirror, and the writer's check of conditional PUT and its lease.
 * Every call runs under its own deadline: a store that accepts connections and never answers must
 * not hold a replica's sync, or a writer's start, for longer than that.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';

export interface StoredObject {
  /** The key below the store's prefix, with "/" separators: "pages.lance/_versions/….manifest". */
  key: string;
  size: number;
  modifiedMs: number | null;
}

export class ObjectStoreTimeoutError extends Error {}

/** Node 20 is this project's runtime; the SDK would print its notice of a future Node 22 requirement on every CLI run. */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export class ObjectStore {
  private readonly client: S3Client;
  private readonly root: string;

  constructor(
    readonly bucket: string,
    prefix: string,
    private readonly timeoutMs: number,
  ) {
    this.root = prefix ? `${prefix}/` : '';
    const endpoint = process.env.AWS_ENDPOINT_URL;
    this.client = new S3Client({
      region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
      // As LanceDB's object_store does: a custom endpoint is addressed by path unless told otherwise.
      forcePathStyle: endpoint !== undefined && process.env.AWS_VIRTUAL_HOSTED_STYLE_REQUEST !== 'true',
      // One attempt per call: the callers retry on their own schedule (the next poll, the next start).
      maxAttempts: 1,
    });
  }

  /** Every object under `below` (a key prefix relative to the store's prefix), page by page. */
  async list(below = ''): Promise<StoredObject[]> {
    const objects: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.call('list', (abortSignal) =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.root + below, ContinuationToken: token }), { abortSignal }),
      );
      for (const entry of page.Contents ?? []) {
        if (entry.Key === undefined || !entry.Key.startsWith(this.root)) continue;
        objects.push({ key: entry.Key.slice(this.root.length), size: entry.Size ?? 0, modifiedMs: entry.LastModified?.getTime() ?? null });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return objects;
  }

  /**
   * Copies one object to `path`, through a temporary file renamed into place, so that a reader never
   * sees part of a file. The deadline bounds the wait for the answer and every pause between two
   * chunks of it, not the whole copy: a large file from a working store takes what it takes.
   */
  async download(key: string, path: string): Promise<number> {
    const partial = `${path}.partial-${process.pid}`;
    await mkdir(dirname(path), { recursive: true });
    const controller = new AbortController();
    let timer = setTimeout(() => controller.abort(new ObjectStoreTimeoutError(`object store: GET ${key} stalled for ${this.timeoutMs} ms`)), this.timeoutMs);
    const stall = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new ObjectStoreTimeoutError(`object store: GET ${key} stalled for ${this.timeoutMs} ms`)), this.timeoutMs);
    };
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.root + key }), { abortSignal: controller.signal });
      const body = answer.Body as Readable;
      const file = createWriteStream(partial);
      let bytes = 0;
      const aborted = () => body.destroy(controller.signal.reason as Error);
      controller.signal.addEventListener('abort', aborted, { once: true });
      try {
        for await (const chunk of body) {
          stall();
          bytes += (chunk as Buffer).length;
          if (!file.write(chunk)) await once(file, 'drain');
        }
      } finally {
        controller.signal.removeEventListener('abort', aborted);
        file.end();
        await once(file, 'close');
      }
      await rename(partial, path);
      return bytes;
    } catch (error) {
      await rm(partial, { force: true });
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The object's text, or null when there is none. */
  async read(key: string): Promise<string | null> {
    try {
      const answer = await this.call('get', (abortSignal) => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.root + key }), { abortSignal }));
      return (await this.call('get', () => answer.Body!.transformToString())) ?? '';
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)) return null;
      throw error;
    }
  }

  async write(key: string, body: string): Promise<void> {
    await this.call('put', (abortSignal) => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.root + key, Body: body }), { abortSignal }));
  }

  /** Writes the object only if there is none (If-None-Match: *); false when one was there already. */
  async create(key: string, body: string): Promise<boolean> {
    try {
      await this.call('put', (abortSignal) =>
        this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.root + key, Body: body, IfNoneMatch: '*' }), { abortSignal }),
      );
      return true;
    } catch (error) {
      if (error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 412 || error.name === 'PreconditionFailed')) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.call('delete', (abortSignal) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.root + key }), { abortSignal }));
  }

  close(): void {
    this.client.destroy();
  }

  private async call<T>(operation: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new ObjectStoreTimeoutError(`object store: ${operation} took longer than ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      return await run(controller.signal);
    } catch (error) {
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      clearTimeout(timer);
    }
  }
}
