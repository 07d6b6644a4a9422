/** One thread's model work with the real model: the tokenizer's pieces and the session's memory options. */
import test from 'ava';
import { InferenceSession, TOKENIZE_PIECE_CHARACTERS } from '../../../src/local/rerank/inference.js';
import { readModelDirectory } from '../../../src/local/rerank/model.js';
import { TEST_MODEL_DIRECTORY } from '../../helpers/gateway.js';

const { directory, spec } = readModelDirectory(TEST_MODEL_DIRECTORY);

/** Prose of every sort: accents, CJK, emoji, numbers, punctuation, tabs and line breaks between words. */
function mixedText(characters: number): string {
  const words = ['Café', 'naïve', 'résumé', '東京都', 'の', '😀', 'U.S.A.', '3.14159', 'state-of-the-art', "don't", 'https://example.org/a?b=c', 'the', 'capital', 'of', 'France'];
  const spaces = [' ', ' ', ' ', '\n', '\t', '  ', '\r\n'];
  let text = '';
  for (let i = 0; text.length < characters; i++) text += words[(i * 7) % words.length]! + spaces[i % spaces.length]!;
  return text;
}

test('a long text is tokenized in pieces to exactly the tokens the whole text gives', async (t) => {
  const session = await InferenceSession.open(directory, spec, { threads: 1, maxBatchTokens: 512, memoryArena: false });
  t.teardown(() => session.close());
  const text = mixedText(TOKENIZE_PIECE_CHARACTERS * 3 + 777);
  const whole = (session as unknown as { tokenizer: { tokenize(text: string): string[] } }).tokenizer.tokenize(text);
  t.true(whole.length > 1000);
  t.deepEqual(session.tokenize(text), whole);
});

test('the session scores the same with ONNX Runtime\'s memory arena on or off', async (t) => {
  const job = { query: 'what is the capital of France', documents: ['Paris is the capital of France.', mixedText(3000)] };
  const scores = [];
  for (const memoryArena of [true, false]) {
    const session = await InferenceSession.open(directory, spec, { threads: 1, maxBatchTokens: 512, memoryArena });
    scores.push((await session.score([job]))[0]!.semantic);
    await session.close();
  }
  t.deepEqual(scores[0], scores[1]);
  t.true(scores[0]![0]! > scores[0]![1]!);
});
