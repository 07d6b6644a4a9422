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

test('a feature left unpenalized is not shrunk: where it separates the data, it outweighs a penalized twin', (t) => {
  // Column 0 separates the labels outright; column 1 is the same column. Penalized alike they share
  // the weight; with column 0 unpenalized, it takes the larger part and the fit stays finite.
  const rows = [[0, 0], [0, 0], [1, 1], [1, 1], [0, 0], [1, 1]];
  const labels = [0, 0, 1, 1, 0, 1];
  const shared = fitLogistic(rows, labels, { l2: 0.1 });
  const free = fitLogistic(rows, labels, { l2: 0.1, unpenalized: [0] });
  t.true(Math.abs(shared.weights[0]! - shared.weights[1]!) < 1e-6, JSON.stringify(shared));
  t.true(free.weights[0]! > free.weights[1]!, JSON.stringify(free));
  t.true(free.weights.every(Number.isFinite));
});
