/**
 * One of the reranker's worker threads: it owns a tokenizer and an ONNX session and does the model
 * work of the part of a task the engine gives it (tokenizing, windows, batches, pooling, BM25).
 * Tokenizing and copying tensors are synchronous; running them here keeps the gateway's event loop
 * free. ONNX Runtime runs a batch synchronously on this thread (plus its own intra-op threads), so
 * several workers are what runs batches side by side.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { InferenceSession, type EmbeddingResult, type EmbeddingTask, type InferenceOptions } from './inference.js';
import type { RerankModelSpec } from './model.js';

export interface WorkerInit {
  directory: string;
  spec: RerankModelSpec;
  options: InferenceOptions;
}

export type WorkerRequest = { id: number; task: EmbeddingTask } | { close: true };
export type WorkerReply = { ready: true } | { failed: string } | { id: number; result: EmbeddingResult } | { id: number; error: string };

const port = parentPort!;
const { directory, spec, options } = workerData as WorkerInit;

/** The buffers of a result's vectors, moved rather than copied to the engine. */
function transferList(result: EmbeddingResult): ArrayBuffer[] {
  return [...result.queries, ...result.documents.map((document) => document.vectors)].map((vector) => vector.buffer as ArrayBuffer);
}

try {
  const session = await InferenceSession.open(directory, spec, options);
  let running: Promise<unknown> = Promise.resolve();
  port.on('message', (message: WorkerRequest) => {
    if ('close' in message) {
      // Releasing the session under a running batch would crash the process; let it finish first.
      void running.finally(() => session.close()).finally(() => port.close());
      return;
    }
    running = running.then(() =>
      session.run(message.task).then(
        (result) => port.postMessage({ id: message.id, result } satisfies WorkerReply, transferList(result)),
        (error: unknown) => port.postMessage({ id: message.id, error: (error as Error).message ?? String(error) } satisfies WorkerReply),
      ),
    );
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
} catch (error) {
  port.postMessage({ failed: (error as Error).message ?? String(error) } satisfies WorkerReply);
}
