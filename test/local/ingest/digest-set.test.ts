import { createHash } from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import { DigestSet } from '../../../src/local/ingest/digest-set.js';
import { contentHash } from '../../../src/local/ingest/indexed-page.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

test('answers as a Set of the hashes would, through growth, for digests and for any other string', (t) => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string({ maxLength: 6 }).map(sha256), fc.string({ maxLength: 6 })), { maxLength: 400 }), (hashes) => {
      // Room for 16 at first: the table grows many times over.
      const digests = new DigestSet(16);
      const reference = new Set<string>();
      for (const hash of hashes) {
        if (digests.add(hash) !== !reference.has(hash)) return false;
        reference.add(hash);
      }
      return digests.size === reference.size && hashes.every((hash) => digests.has(hash)) && !digests.has(sha256('never added'));
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('200,000 distinct page texts are told apart; the same text again is a duplicate; a digest of zeros is a digest like another', (t) => {
  const digests = new DigestSet();
  let added = 0;
  for (let page = 0; page < 200_000; page++) if (digests.add(contentHash(`page ${page}`))) added += 1;
  t.is(added, 200_000);
  t.is(digests.size, 200_000);
  t.false(digests.add(contentHash('PAGE   7')), 'the same text, differently spaced and cased');
  const zeros = '0'.repeat(64);
  t.false(digests.has(zeros));
  t.true(digests.add(zeros));
  t.false(digests.add(zeros));
  t.is(digests.size, 200_001);
});
