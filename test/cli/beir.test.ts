/** Loading a BEIR collection into the local index, as `searchgate calibrate` and the quality benches do. */
import test from 'ava';
import { indexCorpus, searchDocumentIds, type BeirDocument } from '../../src/cli/beir.js';
import { openLocalIndex } from '../../src/local/index/index.js';
import type { LocalIndex } from '../../src/local/types.js';
import { temporaryDirectory } from '../local/index/helpers.js';

/** The index, with a count of the calls that fold. */
function countingFolds(index: LocalIndex): { index: LocalIndex; calls: { upsert: number; fold: number } } {
  const calls = { upsert: 0, fold: 0 };
  const counted = new Proxy(index, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'upsert' || key === 'fold') calls[key] += 1;
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { index: counted, calls };
}

test('a corpus is written through the writer and folded at the end, not once per thousand documents', async (t) => {
  const directory = await temporaryDirectory(t);
  const opened = await openLocalIndex(directory);
  t.teardown(() => opened.close());
  const { index, calls } = countingFolds(opened);
  const corpus: BeirDocument[] = Array.from({ length: 2_500 }, (_, n) => ({ _id: `doc-${n}`, title: `Document ${n}`, text: `filler words ${n % 7 === 0 ? 'aardvark' : 'badger'}` }));
  corpus.push({ _id: 'last one', title: 'Last', text: 'the only quetzal' });

  await indexCorpus(index, corpus);

  t.is(calls.upsert, 0);
  t.is(calls.fold, 1);
  t.is((await opened.stats()).documents, corpus.length);
  t.deepEqual(await searchDocumentIds(opened, 'quetzal', 5), ['last one']);
});
