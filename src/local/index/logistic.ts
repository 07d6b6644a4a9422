/**
 * Logistic regression for the hybrid scorer's weights (hybrid.ts): P(relevant) = sigmoid(b + w·x),
 * fitted by Newton's method on the L2-regularised log-loss. The features are standardised while
 * fitting (their scales differ by orders of magnitude: a cosine, a BM25 score, 1/61) and the weights
 * mapped back, so the fitted model applies to raw features. Each Newton step is halved until the
 * loss goes down, as in Platt's fit (calibration.ts).
 */

export interface LogisticModel {
  intercept: number;
  weights: number[];
}

const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));
/** log(1 + e^z), finite for any z. */
const softplus = (z: number) => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)));

/**
 * Fits on rows of features and 0/1 labels. `unpenalized` lists features (by column) whose weight is
 * not shrunk, for a feature the data cannot bound (one that separates its examples outright).
 * `l2` is the penalty on the standardised weights (not on
 * the intercept); `sampleWeights` let one kind of example count as much as another however many
 * there are of each.
 */
export function fitLogistic(
  rows: readonly (readonly number[])[],
  labels: readonly number[],
  { l2 = 1e-2, sampleWeights, unpenalized = [] }: { l2?: number; sampleWeights?: readonly number[]; unpenalized?: readonly number[] } = {},
): LogisticModel {
  const n = rows.length;
  if (n === 0 || !labels.some((label) => label > 0) || labels.every((label) => label > 0)) {
    throw new Error('fitting needs both relevant and non-relevant examples');
  }
  const d = rows[0]!.length;
  const weightOf = (i: number) => sampleWeights?.[i] ?? 1;
  const mean = new Array<number>(d).fill(0);
  const scale = new Array<number>(d).fill(0);
  let total = 0;
  rows.forEach((row, i) => {
    total += weightOf(i);
    row.forEach((value, j) => (mean[j]! += weightOf(i) * value));
  });
  for (let j = 0; j < d; j++) mean[j]! /= total;
  rows.forEach((row, i) => row.forEach((value, j) => (scale[j]! += weightOf(i) * (value - mean[j]!) ** 2)));
  for (let j = 0; j < d; j++) scale[j] = Math.sqrt(scale[j]! / total) || 1;
  const x = rows.map((row) => row.map((value, j) => (value - mean[j]!) / scale[j]!));

  // beta[0] is the intercept; a feature listed in `unpenalized` is not shrunk.
  const penalty = [0, ...Array.from({ length: d }, (_, j) => (unpenalized.includes(j) ? 0 : l2))];
  let beta = new Array<number>(d + 1).fill(0);
  const positives = labels.reduce((sum, label, i) => sum + (label > 0 ? weightOf(i) : 0), 0);
  beta[0] = Math.log(positives / (total - positives));
  const loss = (b: readonly number[]) => {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const z = linear(b, x[i]!);
      sum += weightOf(i) * (softplus(z) - (labels[i]! > 0 ? z : 0));
    }
    for (let j = 1; j <= d; j++) sum += (penalty[j]! / 2) * total * b[j]! ** 2;
    return sum;
  };
  let current = loss(beta);
  for (let iteration = 0; iteration < 50; iteration++) {
    const gradient = new Array<number>(d + 1).fill(0);
    const hessian = Array.from({ length: d + 1 }, () => new Array<number>(d + 1).fill(0));
    for (let i = 0; i < n; i++) {
      const features = [1, ...x[i]!];
      const p = sigmoid(linear(beta, x[i]!));
      const w = weightOf(i);
      for (let a = 0; a <= d; a++) {
        gradient[a]! += w * (p - (labels[i]! > 0 ? 1 : 0)) * features[a]!;
        for (let b = 0; b <= a; b++) hessian[a]![b]! += w * p * (1 - p) * features[a]! * features[b]!;
      }
    }
    for (let a = 0; a <= d; a++) for (let b = a + 1; b <= d; b++) hessian[a]![b] = hessian[b]![a]!;
    for (let j = 1; j <= d; j++) {
      gradient[j]! += penalty[j]! * total * beta[j]!;
      hessian[j]![j]! += penalty[j]! * total + 1e-9;
    }
    hessian[0]![0]! += 1e-9;
    const step = solve(hessian, gradient);
    let factor = 1;
    let next = beta.map((value, j) => value - step[j]!);
    let nextLoss = loss(next);
    while (!(nextLoss <= current) && factor > 1e-10) {
      factor /= 2;
      next = beta.map((value, j) => value - factor * step[j]!);
      nextLoss = loss(next);
    }
    if (!(nextLoss <= current)) break;
    const improvement = current - nextLoss;
    beta = next;
    current = nextLoss;
    if (improvement < 1e-10 * Math.max(1, Math.abs(current))) break;
  }
  // Back to raw features: b0 − Σ βj·μj/σj, and βj/σj.
  const weights = beta.slice(1).map((value, j) => value / scale[j]!);
  const intercept = beta[0]! - weights.reduce((sum, weight, j) => sum + weight * mean[j]!, 0);
  return { intercept, weights };
}

export function predict(model: LogisticModel, row: readonly number[]): number {
  return sigmoid(model.intercept + row.reduce((sum, value, j) => sum + value * model.weights[j]!, 0));
}

function linear(beta: readonly number[], x: readonly number[]): number {
  let z = beta[0]!;
  for (let j = 0; j < x.length; j++) z += beta[j + 1]! * x[j]!;
  return z;
}

/** Gaussian elimination with partial pivoting: solves A·s = g for a small dense system. */
function solve(matrix: number[][], vector: number[]): number[] {
  const size = vector.length;
  const a = matrix.map((row, i) => [...row, vector[i]!]);
  for (let column = 0; column < size; column++) {
    let pivot = column;
    for (let row = column + 1; row < size; row++) if (Math.abs(a[row]![column]!) > Math.abs(a[pivot]![column]!)) pivot = row;
    [a[column], a[pivot]] = [a[pivot]!, a[column]!];
    const head = a[column]![column]! || 1e-12;
    for (let row = column + 1; row < size; row++) {
      const factor = a[row]![column]! / head;
      for (let k = column; k <= size; k++) a[row]![k]! -= factor * a[column]![k]!;
    }
  }
  const solution = new Array<number>(size).fill(0);
  for (let row = size - 1; row >= 0; row--) {
    let sum = a[row]![size]!;
    for (let k = row + 1; k < size; k++) sum -= a[row]![k]! * solution[k]!;
    solution[row] = sum / (a[row]![row]! || 1e-12);
  }
  return solution;
}
