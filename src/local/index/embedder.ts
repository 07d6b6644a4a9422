/**
 * The embedded model as the index uses it: pages embedded at write time, queries at search time,
 * with one stamp naming the model and the windowing, stored beside every vector.
 */
import { ModelDirectoryError } from '../rerank/model.js';
import type { PageEmbedder } from './writer.js';

export interface QueryEmbedder {
  readonly model: string;
  readonly dimensions: number;
  embedQuery(query: string, signal?: AbortSignal): Promise<Float32Array>;
}

export interface LoadedEmbedder {
  embedder: PageEmbedder & QueryEmbedder;
  close(): Promise<void>;
}

export async function openPageEmbedder(modelDirectory: string): Promise<LoadedEmbedder> {
  throw new ModelDirectoryError(`not wired yet: ${modelDirectory}`);
}
