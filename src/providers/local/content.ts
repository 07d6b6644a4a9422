/**
 * local content: page text for results of any upstream. A page already in the local index is
 * served from it; otherwise it is fetched with the SSRF-safe fetcher, extracted off the event loop,
 * and, when the deployment asks for it, added to the index. A page that cannot be fetched (an error
 * status, a refused address, too slow) is that page's failure, reported as such, never the
 * provider's.
 */
import { LRUCache } from 'lru-cache';
import { FetchError, fetchPolicy, safeFetch } from '../../local/fetch/index.js';
import { toIndexedPage } from '../../local/ingest/indexed-page.js';
import type { IndexEmbedder } from '../../local/index/embedder.js';
import { IndexWriter } from '../../local/index/writer.js';
import { isObjectStoreLocation } from '../../local/index/location.js';
import { acquireIndexEmbedder, sharedExtractor } from '../../local/shared.js';
import type { IndexedPage } from '../../local/types.js';
import { providerIndex, type LocalOptions } from './search.js';
import type { ContentProvider, PageContent, PageFailure } from '../types.js';

/** Extracted pages kept in memory, so a page shared by many answers is fetched once an hour at most. */
const PAGE_CACHE_BYTES = 32 * 1024 * 1024;
const PAGE_CACHE_TTL_MS = 60 * 60_000;

export function createLocalContent(name: string, options: LocalOptions): ContentProvider & { close(): Promise<void> } {
  if (options.addFetchedPages && isObjectStoreLocation(options.directory)) {
    throw new Error(
      `providers.${name}.addFetchedPages: ${options.directory} is served as a read-only replica; ` +
        'pages go into an index on object storage through its one writer, `searchgate index add|crawl --dir <uri>`',
    );
  }
  // Work still running, a page's fetch or its write to the index, may outlive the answer that asked
  // for it (a content budget ran out). The gateway's close waits for it, so no write is cut off and
  // the index folder is whole when the process, or a test, moves on.
  const running = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    void work.then(
      () => running.delete(work),
      () => running.delete(work),
    );
    return work;
  };
  // Fetched pages go into the index through the writer `index add` and the crawler use: a page is
  // appended within a second, with its vectors as `index add` would give them (full text alone
  // without the model), and made searchable within a minute: left to the searches' scan of unindexed
  // rows, and folded only once more than maxUnindexedRows have gathered. A fold compacts the whole
  // table (docs/benchmarks.md, "Index at scale"), so folding each page as it came would cost a large
  // index seconds and a gigabyte per page.
  let model: { embedder: Promise<IndexEmbedder>; release(): Promise<void> } | null = null;
  let writer: Promise<IndexWriter> | null = null;
  const openWriter = async (): Promise<IndexWriter> => {
    let embedder: IndexEmbedder | null = null;
    if (options.vectorModel !== 'none') {
      model ??= acquireIndexEmbedder(options.vectorModel);
      embedder = await model.embedder.catch(() => null);
    }
    return IndexWriter.open(await providerIndex(options), { embedder });
  };
  const addToIndex = (page: IndexedPage): Promise<void> => {
    const current = (writer ??= openWriter());
    return current.then((opened) => opened.add(page)).catch((error: unknown) => {
      // A writer whose batch failed refuses every later page: the next page opens a new one.
      if (writer === current) writer = null;
      throw error;
    });
  };
  const recentPages = new LRUCache<string, PageContent>({
    maxSize: PAGE_CACHE_BYTES,
    sizeCalculation: (page) => Math.max(1, (page.text.length + (page.markdown?.length ?? 0)) * 2),
    ttl: PAGE_CACHE_TTL_MS,
  });
  const policy = fetchPolicy({
    allowPrivateNetworks: options.allowPrivateNetworks,
    maxBytes: options.maxPageBytes,
    maxDecodedBytes: options.maxPageBytes * 2,
    timeoutMs: options.fetchTimeoutMs,
  });
  return {
    name,
    async close() {
      while (running.size > 0) await Promise.allSettled([...running]);
      // Folds what the writer appended, so a search finds it when the gateway comes back.
      const [closing, lease] = [writer, model];
      writer = null;
      model = null;
      await closing?.then((opened) => opened.close()).catch(() => {});
      await lease?.release();
    },
    fetchContent(url, { markdown, signal }) {
      return track(fetchPageContent(url, markdown, signal));
    },
  };

  async function fetchPageContent(url: string, markdown: boolean, signal: AbortSignal): Promise<PageContent | PageFailure | null> {
    const recent = recentPages.get(url);
    if (recent && (recent.markdown || !markdown)) return recent;
    const index = await providerIndex(options);
    const stored = await index.get(url);
    // A stored page is served as the index has it, also when it has no markdown (a page ingested as
    // text): fetching it again would make every answer from an offline index wait on the network.
    if (stored?.text) return contentOf(stored, markdown);

    let fetched: Awaited<ReturnType<typeof safeFetch>>;
    try {
      fetched = await safeFetch(url, policy, signal);
    } catch (error) {
      if (error instanceof FetchError) return pageFailureOf(error);
      throw error;
    }
    if (fetched.status !== 200) return { failure: 'not_found', httpStatus: fetched.status };
    // A page bound for the index gets its markdown too, as the crawler's pages do.
    const extracted = await sharedExtractor().extract(fetched.body, { url: fetched.url, contentType: fetched.contentType }, { markdown: markdown || options.addFetchedPages });
    const page = toIndexedPage(extracted, { url: fetched.url, fetchedAt: new Date().toISOString() });
    if (!page) return null; // a challenge page or no text: never returned as text
    // Not awaited: embedding and appending take longer than a content budget should wait.
    if (options.addFetchedPages) void track(addToIndex(page)).catch(() => {});
    // Kept with its markdown, if it has one, for a later request that asks for it.
    const content = contentOf(page, true);
    recentPages.set(url, content);
    return content;
  }
}

/** A page of the index as the content chain gives it; its markdown only when wanted. */
function contentOf(page: IndexedPage, withMarkdown: boolean): PageContent {
  const content: PageContent = { text: page.text, title: page.title, datePublished: page.datePublished };
  if (withMarkdown && page.markdown) content.markdown = page.markdown;
  return content;
}

function pageFailureOf(error: FetchError): PageFailure {
  switch (error.kind) {
    case 'refused':
    case 'redirect_refused':
      return { failure: 'blocked' };
    case 'timeout':
    case 'aborted':
      return { failure: 'timeout' };
    default:
      return { failure: 'error' };
  }
}
