/**
 * A second process writing to an index, for the crash and multi-process tests. It upserts numbered
 * batches and reports each one on stdout once its upsert has returned (is committed):
 *
 *   node writer-process.js <directory> <prefix> <batches> <batchSize>
 */
import { openLocalIndex } from '../../../src/local/index/index.js';
import { report } from '../../helpers/report.js';
import { filler, page, writerPageUrl } from './helpers.js';

const [directory, prefix, batches, batchSize] = process.argv.slice(2);
if (!directory || !prefix) throw new Error('usage: writer-process <directory> <prefix> <batches> <batchSize>');

const index = await openLocalIndex(directory);
for (let batch = 0; batch < Number(batches); batch++) {
  await index.upsert(
    Array.from({ length: Number(batchSize) }, (_, position) =>
      page(writerPageUrl(prefix, batch, position), { text: `wombat burrow ${prefix} ${filler(40)}` }),
    ),
  );
  await report(`committed ${batch + 1}`);
}
await index.close();
await report('done');
