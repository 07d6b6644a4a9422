/**
 * `searchgate calibrate` end to end on a tiny collection in BEIR's format, with the real model
 * (scripts/fetch-model.sh prepares it; .ci/run fetches it before the tests).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import test from 'ava';
import { checkCalibration } from '../../src/local/rerank/calibration.js';
import { MODEL_SPEC_FILE, readModelDirectory } from '../../src/local/rerank/model.js';
import { runCli } from '../helpers/cli.js';
import { TEST_MODEL_DIRECTORY } from '../helpers/gateway.js';

/** A calibration run loads the real model and scores every candidate: it gets a little longer than the default. */
const searchgate = (args: string[]) => runCli(args, { timeoutMs: 55_000 });

/** Five topics of six short documents; each query is answered by the first two of its topic. */
const TOPICS: { query: string; documents: string[] }[] = [
  {
    query: 'how do volcanoes erupt',
    documents: [
      'Volcanoes erupt when magma rises through the crust and gas pressure forces it out of the vent.',
      'A volcanic eruption happens as molten rock and dissolved gases push up and burst through the volcano.',
      'Volcanic soil is fertile, so farms often surround old volcanoes.',
      'Tourists visit the volcano museum to buy souvenirs and postcards.',
      'The volcano observatory publishes a yearly report on staff and budget.',
      'Some volcanoes are named after saints and local legends.',
    ],
  },
  {
    query: 'how do honeybees make honey',
    documents: [
      'Honeybees make honey by collecting flower nectar, adding enzymes and evaporating the water in wax cells.',
      'Worker bees turn nectar into honey: they pass it between them, then fan it with their wings until it thickens.',
      'Beekeepers wear white suits and use smoke when they open a hive.',
      'The honeybee is the state insect of several American states.',
      'Bee stings hurt because of a venom called melittin.',
      'A queen bee can live for several years.',
    ],
  },
  {
    query: 'what causes ocean tides',
    documents: [
      'Ocean tides are caused by the gravitational pull of the moon and the sun on the seas.',
      'The moon’s gravity raises a bulge of water on the side of the earth facing it, which causes the tides.',
      'Tide pools are home to crabs, anemones and small fish.',
      'Harbour masters print tide tables for sailors every year.',
      'Surfers prefer beaches with steady swell.',
      'Some coastal towns hold a festival for the spring tide.',
    ],
  },
  {
    query: 'how does a knight move in chess',
    documents: [
      'In chess the knight moves in an L shape: two squares in one direction and then one square sideways.',
      'A chess knight jumps two squares straight and one square across, and it can leap over other pieces.',
      'Chess clubs meet on Tuesday evenings in the library.',
      'The world chess championship was first held in 1886.',
      'Chess sets are often carved from wood or ivory.',
      'Many children learn chess from their grandparents.',
    ],
  },
  {
    query: 'why does bread dough rise',
    documents: [
      'Bread dough rises because yeast ferments the sugars and releases carbon dioxide gas that the gluten traps.',
      'Yeast in the dough eats sugar and makes gas bubbles, which make the bread dough rise and swell.',
      'Sourdough bakeries open early in the morning.',
      'Bread was a staple food in ancient Egypt.',
      'A bread knife has a serrated edge.',
      'Some people bake bread at home on weekends.',
    ],
  },
];

/** Writes the collection in BEIR's format; returns the three file paths. */
function writeCollection(directory: string): { corpus: string; queries: string; qrels: string } {
  const corpus: string[] = [];
  const queries: string[] = [];
  const qrels = ['query-id\tcorpus-id\tscore'];
  TOPICS.forEach((topic, t) => {
    queries.push(JSON.stringify({ _id: `q${t}`, text: topic.query }));
    topic.documents.forEach((text, d) => {
      corpus.push(JSON.stringify({ _id: `d${t}-${d}`, title: '', text }));
      if (d < 2) qrels.push(`q${t}\td${t}-${d}\t1`);
    });
  });
  const paths = { corpus: join(directory, 'corpus.jsonl'), queries: join(directory, 'queries.jsonl'), qrels: join(directory, 'qrels.tsv') };
  writeFileSync(paths.corpus, corpus.join('\n') + '\n');
  writeFileSync(paths.queries, queries.join('\n') + '\n');
  writeFileSync(paths.qrels, qrels.join('\n') + '\n');
  return paths;
}

/**
 * A model directory whose spec file is a private copy (with an extra key the command must keep)
 * and whose other files link to the real model, so the default --out never touches the real one.
 */
function privateModelDirectory(root: string): string {
  const source = resolve(TEST_MODEL_DIRECTORY);
  const directory = join(root, 'model');
  mkdirSync(directory);
  for (const file of readdirSync(source)) {
    if (file !== MODEL_SPEC_FILE) symlinkSync(join(source, file), join(directory, file));
  }
  const spec = JSON.parse(readFileSync(join(source, MODEL_SPEC_FILE), 'utf8'));
  writeFileSync(join(directory, MODEL_SPEC_FILE), JSON.stringify({ ...spec, calibration: null, note: 'kept as is' }, null, 2));
  return directory;
}

test('calibrate fits a calibration, writes it into the model spec and keeps the other keys', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'searchgate-calibrate-'));
  const files = writeCollection(root);
  const model = privateModelDirectory(root);
  const before = JSON.parse(readFileSync(join(model, MODEL_SPEC_FILE), 'utf8'));

  const run = await searchgate(['calibrate', '--model', model, '--corpus', files.corpus, '--queries', files.queries, '--qrels', files.qrels, '--candidates', '10', '--lexical-weights', '0,0.05']);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /nDCG@10/);
  t.regex(run.stdout, /platt .*written/);
  t.regex(run.stdout, /isotonic/);
  t.regex(run.stderr, /scored 5\/5 queries/);

  const after = JSON.parse(readFileSync(join(model, MODEL_SPEC_FILE), 'utf8'));
  t.is(checkCalibration(after.calibration), null);
  t.is(after.calibration.method, 'platt');
  t.true([0, 0.05].includes(after.lexicalWeight));
  const rewritten = ['calibration', 'lexicalWeight', 'calibratedOn'];
  for (const [key, value] of Object.entries(before)) {
    if (!rewritten.includes(key)) t.deepEqual(after[key], value, `key "${key}" kept`);
  }
  t.is(after.note, 'kept as is');
  // BM25 returns only documents sharing a word with the query, so some queries have fewer than 10.
  t.like(after.calibratedOn, { queries: 5, positives: 10, method: 'platt' });
  t.true(after.calibratedOn.pairs > 10 && after.calibratedOn.pairs <= 50, String(after.calibratedOn.pairs));
  t.true(after.calibratedOn.ndcgAt10.modelAlone > 0.5, JSON.stringify(after.calibratedOn.ndcgAt10));
  // The service must accept what was written.
  t.deepEqual(readModelDirectory(model).spec.calibration, after.calibration);
});

test('calibrate --out writes isotonic to another file, leaving the model spec alone', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'searchgate-calibrate-'));
  const files = writeCollection(root);
  const model = privateModelDirectory(root);
  const specBefore = readFileSync(join(model, MODEL_SPEC_FILE), 'utf8');
  const out = join(root, 'committed-spec.json');
  writeFileSync(out, JSON.stringify({ id: 'committed', family: 'bi-encoder', source: 'somewhere', calibration: null }));

  const run = await searchgate(['calibrate', '--model', model, '--corpus', files.corpus, '--queries', files.queries, '--qrels', files.qrels, '--candidates', '8', '--method', 'isotonic', '--max-queries', '4', '--out', out]);
  t.is(run.code, 0, run.stderr);
  const written = JSON.parse(readFileSync(out, 'utf8'));
  t.is(checkCalibration(written.calibration), null);
  t.is(written.calibration.method, 'isotonic');
  t.like(written, { id: 'committed', family: 'bi-encoder', source: 'somewhere' });
  t.like(written.calibratedOn, { queries: 4, method: 'isotonic' });
  t.true(written.calibratedOn.pairs <= 32, String(written.calibratedOn.pairs));
  t.is(readFileSync(join(model, MODEL_SPEC_FILE), 'utf8'), specBefore);
});

test('calibrate exits 2 with a message on bad flags and missing files', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'searchgate-calibrate-'));
  const files = writeCollection(root);
  const model = resolve(TEST_MODEL_DIRECTORY);
  const complete = ['--model', model, '--corpus', files.corpus, '--queries', files.queries, '--qrels', files.qrels];
  const cases: [string[], RegExp][] = [
    [[], /--model is required/],
    [complete.slice(2), /--model is required/],
    [['--model', model, '--queries', files.queries, '--qrels', files.qrels], /--corpus is required/],
    [[...complete, '--candidates', 'many'], /--candidates must be an integer/],
    [[...complete, '--candidates', '0'], /--candidates must be an integer ≥ 1/],
    [[...complete, '--max-queries', '2.5'], /--max-queries must be an integer/],
    [[...complete, '--method', 'sigmoid'], /--method must be "platt" or "isotonic"/],
    [[...complete, '--lexical-weights', '0,x'], /--lexical-weights must be/],
    [[...complete, '--lexical-weights', '0,-1'], /--lexical-weights must be/],
    [[...complete, '--bogus'], /Unknown option '--bogus'/],
    [[...complete, 'extra'], /unexpected argument "extra"/],
    [['--model', join(root, 'no-model'), ...complete.slice(2)], /no such model directory/],
    [[...complete.slice(0, 2), '--corpus', join(root, 'missing.jsonl'), ...complete.slice(4)], /--corpus: no such file/],
    [[...complete, '--out', join(root, 'no-dir', 'spec.json')], /--out: no such directory/],
    // A directory without a model spec is a bad --model too, named in the message.
    [['--model', root, ...complete.slice(2)], new RegExp(MODEL_SPEC_FILE)],
  ];
  // Each run stops at its flags, before the model loads, so they can all run at once.
  const runs = await Promise.all(cases.map(([args]) => searchgate(['calibrate', ...args])));
  runs.forEach((run, i) => {
    const [args, message] = cases[i]!;
    t.is(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    t.regex(run.stderr, message, args.join(' '));
  });
  const help = await searchgate(['calibrate', '--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /usage: searchgate calibrate/);
});

test('calibrate --retrieval fits the hybrid scorer on an index of the corpus, writes "retrieval" that the service reads, and keeps the other keys', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'searchgate-calibrate-'));
  const files = writeCollection(root);
  const model = privateModelDirectory(root);
  const before = JSON.parse(readFileSync(join(model, MODEL_SPEC_FILE), 'utf8'));

  const run = await searchgate(['calibrate', '--retrieval', '--model', model, '--corpus', files.corpus, '--queries', files.queries, '--qrels', files.qrels, '--candidates', '10', '--folds', '2']);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stderr, /indexed: 30 written/);
  for (const row of ['BM25 order', 'cosine alone', 'reciprocal rank fusion', 'pointwise logistic', 'pairwise logistic']) t.regex(run.stdout, new RegExp(row));

  const after = JSON.parse(readFileSync(join(model, MODEL_SPEC_FILE), 'utf8'));
  for (const [key, value] of Object.entries(before)) {
    if (key !== 'retrieval' && key !== 'retrievalCalibratedOn') t.deepEqual(after[key], value, `key "${key}" kept`);
  }
  const { spec } = readModelDirectory(model);
  t.deepEqual(spec.retrieval, after.retrieval);
  // Meaning should count: on these topics the cosine separates answers from the rest.
  t.true(spec.retrieval!.cosine > 0, JSON.stringify(spec.retrieval));
  t.true(after.retrievalCalibratedOn.heldOut.pairwise.ndcgAt10 > 0.5, JSON.stringify(after.retrievalCalibratedOn.heldOut));

  const bad = await searchgate(['calibrate', '--retrieval', '--model', model, '--corpus', files.corpus, '--queries', files.queries, '--qrels', files.qrels, '--folds', '1']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--folds must be an integer ≥ 2/);
});
