/** One extraction thread of the ExtractorPool: runs tasks one at a time and replies with the page. */
import { parentPort } from 'node:worker_threads';
import { extractDocument } from './document.js';
import { extractHtml } from './html.js';
import type { WorkerReply, WorkerTask } from './pool.js';

if (!parentPort) throw new Error('worker.js runs only as an ExtractorPool worker thread');
const port = parentPort;

port.on('message', async (task: WorkerTask) => {
  let reply: WorkerReply;
  try {
    const page =
      task.kind === 'html'
        ? extractHtml(task.html, task.url, task.options)
        : await extractDocument(task.bytes, { url: task.url, contentType: task.contentType }, task.options);
    reply = { id: task.id, page };
  } catch (error) {
    reply = { id: task.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});

// Everything is loaded: from here on, time spent is the pages' own.
const ready: WorkerReply = { ready: true };
port.postMessage(ready);
