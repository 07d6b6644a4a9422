/** The hybrid scorer's logistic fit: it recovers a known model, and copes with features of very different scales. */
import test from 'ava';
import { fitLogistic, predict } from '../../../src/local/index/logistic.js';
import { seededRandom } from '../../../src/util/random.js';

test('recovers the weights of data drawn from a known logistic model, whatever the features\' scales', (t) => {
  const random = seededRandom(7);
  const truth = { intercept: -2, weights: [3, -0.02, 40] };
  const rows: number[][] = [];
  const labels: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    // A cosine-like feature, a BM25-like one in the tens, and a reciprocal rank near 1/60.
    const row = [random() * 2 - 1, random() * 50, random() / 30];
    rows.push(row);
    labels.push(random() < predict(truth, row) ? 1 : 0);
  }
  const fitted = fitLogistic(rows, labels, { l2: 0 });
  t.true(Math.abs(fitted.intercept - truth.intercept) < 0.25, `intercept ${fitted.intercept}`);
  fitted.weights.forEach((weight, j) => t.true(Math.abs(weight - truth.weights[j]!) < 0.2 * Math.abs(truth.weights[j]!) + 0.01, `weight ${j}: ${weight}`));
});

test('separable data stays finite under the L2 penalty; one-class data is refused', (t) => {
  const rows = [[0], [1], [2], [3]];
  const fitted = fitLogistic(rows, [0, 0, 1, 1]);
  t.true(Number.isFinite(fitted.weights[0]!) && fitted.weights[0]! > 0);
  t.true(predict(fitted, [3]) > predict(fitted, [0]));
  t.throws(() => fitLogistic(rows, [1, 1, 1, 1]), { message: /both relevant and non-relevant/ });
});
