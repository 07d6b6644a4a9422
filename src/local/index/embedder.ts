/**
 * The embedded model as the index uses it: pages embedded at write time, queries at search time,
 * with one stamp naming the model and its windowing, stored beside every vector. It runs on the
 * embedded reranker's engine (its worker threads, its tokenizer), so a gateway that reranks and
 * searches holds the model once.
 *
 * A page is embedded from its title and the opening of its text, at most `maxWindows` windows: the
 * opening says what a page is about, and the cost of writing an index is the model's time per token
 * (docs/benchmarks.md, "Index at scale"). Full-text search still reads the whole text. Its title is
 * embedded alone as well, a few tokens more: the hybrid scorer's title cosine (docs/benchmarks.md,
 * "A title vector").
 */
import type { DocumentEmbedding } from '../rerank/cache.js';
import { NeuralReranker, type NeuralRerankerOptions } from '../rerank/engine.js';
import { ModelDirectoryError, modelStamp, type RerankModelSpec, type RetrievalWeights } from '../rerank/model.js';
import type { PageEmbedder } from './writer.js';

export interface QueryEmbedder {
  /** The stamp of the page vectors this model writes. */
  readonly model: string;
  /**
   * The stamps of page vectors its queries compare with: its own, and that of the same model's
   * windows from before title vectors (an index not yet re-embedded keeps serving).
   */
  readonly reads: readonly string[];
  readonly dimensions: number;
  embedQuery(query: string, signal?: AbortSignal): Promise<Float32Array>;
}

/** Both directions, and the hybrid scorer's weights fitted for this model (`searchgate calibrate`), if any. */
export interface IndexEmbedder extends PageEmbedder, QueryEmbedder {
  readonly retrieval: RetrievalWeights | undefined;
}

export interface LoadedEmbedder {
  embedder: IndexEmbedder;
  close(): Promise<void>;
}

/** Windows of a page that are embedded (256 tokens each for MiniLM): its title and opening. */
export const DEFAULT_PAGE_WINDOWS = 1;

/**
 * Page vectors with a title vector are stamped as the model's windows plus this: the writer embeds a
 * page stamped without it again (`index add --reembed` adds the title vectors), as after a model
 * change, while searches keep reading it meanwhile.
 */
const WITH_TITLE = '+title';

/** The index's view of a loaded engine. Vectors are unit length, so a dot product is their cosine. */
export function indexEmbedder(reranker: NeuralReranker, options: { maxWindows?: number } = {}): IndexEmbedder {
  const { spec } = reranker;
  if (spec.family !== 'bi-encoder') {
    throw new ModelDirectoryError(`${spec.id} is a cross-encoder: it scores pairs and makes no vectors the index could store; use a bi-encoder for vectors`);
  }
  const maxWindows = options.maxWindows ?? DEFAULT_PAGE_WINDOWS;
  const dimensions = reranker.dimensions;
  const windowsStamp = modelStamp(spec);
  const pagesStamp = `${windowsStamp}${WITH_TITLE}`;
  return {
    model: pagesStamp,
    reads: [pagesStamp, windowsStamp],
    dimensions,
    retrieval: spec.retrieval ?? undefined,
    async embedQuery(query, signal) {
      const { queries } = await reranker.embed({ queries: [query], documents: [], maxWindows }, signal);
      return unit(queries[0]!, spec);
    },
    async embedPages(pages, signal) {
      // A title is a document's text (the model's document prefix applies): one short window.
      const titled = pages.flatMap((page, i) => (page.title.trim() ? [i] : []));
      const { documents } = await reranker.embed({ queries: [], documents: [...pages.map(pageText), ...titled.map((i) => pages[i]!.title)], maxWindows }, signal);
      const titles = new Map(titled.map((page, k) => [page, windowsOf(documents[pages.length + k]!, dimensions, spec)[0]!]));
      return pages.map((_, i) => ({ windows: windowsOf(documents[i]!, dimensions, spec), title: titles.get(i) ?? null }));
    },
  };
}

/** A page as the model reads it: the title, then the text (the model's document prefix is added by the engine). */
function pageText(page: { title: string; text: string }): string {
  return page.title ? `${page.title}\n${page.text}` : page.text;
}

function windowsOf(document: DocumentEmbedding, dimensions: number, spec: RerankModelSpec): Float32Array[] {
  return Array.from({ length: document.windows }, (_, i) => unit(document.vectors.slice(i * dimensions, (i + 1) * dimensions), spec));
}

/** A model whose spec does not normalize still gives unit vectors to the index, whose ANN search uses the dot product. */
function unit(vector: Float32Array, spec: RerankModelSpec): Float32Array {
  if (spec.normalize) return vector;
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  return vector.map((value) => value / norm);
}

/**
 * For `searchgate index add`: the model in this process alone, with every core (ingest is a batch
 * job), and no document cache (each page is seen once).
 */
export async function openPageEmbedder(modelDirectory: string, options: NeuralRerankerOptions & { maxWindows?: number } = {}): Promise<LoadedEmbedder> {
  const { maxWindows, ...engine } = options;
  const reranker = await NeuralReranker.open(modelDirectory, { embeddingCacheBytes: 0, maxQueuedDocuments: Number.MAX_SAFE_INTEGER, ...engine });
  try {
    return { embedder: indexEmbedder(reranker, { maxWindows }), close: () => reranker.close() };
  } catch (error) {
    await reranker.close();
    throw error;
  }
}
