/**
 * The reranker's worker thread. Tokenizing a batch and copying tensors are synchronous and take tens
 * of milliseconds for a large request; running them here keeps the gateway's event loop free. ONNX
 * Runtime's own threads (sized by the engine) do the matrix work.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, type InferenceOptions, type ScoringJob } from './inference.js';
import type { RerankModelSpec } from './model.js';

export interface WorkerInit {
  directory: string;
  spec: RerankModelSpec;
  options: InferenceOptions;
}

export type WorkerRequest = { id: number; jobs: ScoringJob[] } | { close: true };
export type WorkerReply =
  | { ready: true }
  | { failed: string }
  | { id: number; scores: Awaited<ReturnType<InferenceSession['score']>>; cacheHits: number }
  | { id: number; error: string };

const port = parentPort!;
const { directory, spec, options } = workerData as WorkerInit;

try {
  const session = await InferenceSession.open(directory, spec, options);
  let running: Promise<unknown> = Promise.resolve();
  port.on('message', (message: WorkerRequest) => {
    if ('close' in message) {
      // Releasing the session under a running batch would crash the process; let it finish first.
      void running.finally(() => session.close()).finally(() => port.close());
      return;
    }
    const hitsBefore = session.cacheStats.hits;
    running = session.score(message.jobs).then(
      (scores) => port.postMessage({ id: message.id, scores, cacheHits: session.cacheStats.hits - hitsBefore } satisfies WorkerReply),
      (error: unknown) => port.postMessage({ id: message.id, error: (error as Error).message ?? String(error) } satisfies WorkerReply),
    );
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
} catch (error) {
  port.postMessage({ failed: (error as Error).message ?? String(error) } satisfies WorkerReply);
}
