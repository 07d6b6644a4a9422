/**
 * Calibration: the map from a model's raw score to a probability of relevance in [0, 1], fitted on
 * labelled (query, document) pairs. Users put absolute thresholds on rerank scores (the spec's bands:
 * ≥ 0.75 answers fully, < 0.1 not relevant), which only works when a score of 0.8 means about eight
 * in ten such documents are relevant, whatever the model's raw scale.
 *
 * Two methods: Platt scaling (a logistic curve; smooth, two parameters, extrapolates sensibly) and
 * isotonic regression (a monotone step curve by pool-adjacent-violators, linearly interpolated;
 * follows any shape but is flat outside the fitted range). Both are monotone non-decreasing.
 */

export type Calibration =
  | { method: 'platt'; slope: number; intercept: number }
  | { method: 'isotonic'; x: number[]; y: number[] };

/** Why a value is not a usable calibration, or null when it is. */
export function checkCalibration(value: unknown): string | null {
  if (!value || typeof value !== 'object') return 'must be an object';
  const c = value as Record<string, unknown>;
  if (c.method === 'platt') {
    if (typeof c.slope !== 'number' || !Number.isFinite(c.slope) || c.slope < 0) return 'needs a finite "slope" ≥ 0';
    if (typeof c.intercept !== 'number' || !Number.isFinite(c.intercept)) return 'needs a finite "intercept"';
    return null;
  }
  if (c.method === 'isotonic') {
    const { x, y } = c;
    if (!Array.isArray(x) || !Array.isArray(y) || x.length === 0 || x.length !== y.length) {
      return 'needs "x" and "y" arrays of the same non-zero length';
    }
    for (let i = 0; i < x.length; i++) {
      if (typeof x[i] !== 'number' || typeof y[i] !== 'number' || !Number.isFinite(x[i]) || !Number.isFinite(y[i]) || y[i] < 0 || y[i] > 1) {
        return 'needs finite "x" and "y" values in [0, 1]';
      }
      if (i > 0 && (x[i] <= x[i - 1] || y[i] < y[i - 1])) return 'needs increasing "x" and non-decreasing "y"';
    }
    return null;
  }
  return 'needs "method" "platt" or "isotonic"';
}

const sigmoid = (z: number) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

/**
 * Raw score to [0, 1]. Without a fitted calibration the raw value is squashed the way the model
 * family suggests (sigmoid of a logit, rescaled cosine); such scores rank correctly but their bands
 * mean nothing, which the service warns about at start.
 */
export function calibrate(calibration: Calibration | null, score: number, family: 'cross-encoder' | 'bi-encoder'): number {
  if (Number.isNaN(score)) return 0;
  // ±Infinity stays monotone: it behaves like the largest (or smallest) finite score.
  const raw = Number.isFinite(score) ? score : score > 0 ? Number.MAX_VALUE : -Number.MAX_VALUE;
  if (!calibration) return family === 'cross-encoder' ? sigmoid(raw) : Math.min(1, Math.max(0, (raw + 1) / 2));
  if (calibration.method === 'platt') return sigmoid(calibration.slope * raw + calibration.intercept);
  const { x, y } = calibration;
  if (raw <= x[0]!) return y[0]!;
  if (raw >= x[x.length - 1]!) return y[y.length - 1]!;
  let low = 0;
  let high = x.length - 1;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (x[middle]! <= raw) low = middle;
    else high = middle;
  }
  const share = (raw - x[low]!) / (x[high]! - x[low]!);
  return y[low]! + share * (y[high]! - y[low]!);
}

/**
 * Platt scaling by Newton's method on the log-loss, with Platt's smoothed targets
 * ((positives + 1) / (positives + 2) and 1 / (negatives + 2)) so a separable set does not send the
 * slope to infinity. Each Newton step is halved until the loss goes down (Lin, Lin & Weng 2007): a
 * full step from slope 0 overshoots when a few relevant pairs lie far above the rest, and diverges.
 */
export function fitPlatt(raw: readonly number[], labels: readonly number[]): Calibration {
  const positives = labels.filter((label) => label > 0).length;
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) throw new Error('calibration needs both relevant and non-relevant pairs');
  const high = (positives + 1) / (positives + 2);
  const low = 1 / (negatives + 2);
  const targets = labels.map((label) => (label > 0 ? high : low));
  const loss = (slope: number, intercept: number) => {
    let sum = 0;
    for (let i = 0; i < raw.length; i++) {
      const z = slope * raw[i]! + intercept;
      // log(1 + e^z) − t·z, written to stay finite for large |z|.
      sum += (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z))) - targets[i]! * z;
    }
    return sum;
  };
  let slope = 0;
  let intercept = Math.log((positives + 1) / (negatives + 1));
  let current = loss(slope, intercept);
  for (let iteration = 0; iteration < 100; iteration++) {
    let gradientSlope = 0;
    let gradientIntercept = 0;
    let hessianSS = 1e-12;
    let hessianSI = 0;
    let hessianII = 1e-12;
    for (let i = 0; i < raw.length; i++) {
      const p = sigmoid(slope * raw[i]! + intercept);
      const error = p - targets[i]!;
      const weight = p * (1 - p);
      gradientSlope += error * raw[i]!;
      gradientIntercept += error;
      hessianSS += weight * raw[i]! * raw[i]!;
      hessianSI += weight * raw[i]!;
      hessianII += weight;
    }
    const determinant = hessianSS * hessianII - hessianSI * hessianSI;
    if (Math.abs(determinant) < 1e-18) break;
    const stepSlope = (hessianII * gradientSlope - hessianSI * gradientIntercept) / determinant;
    const stepIntercept = (hessianSS * gradientIntercept - hessianSI * gradientSlope) / determinant;
    let scale = 1;
    let next = loss(slope - stepSlope, intercept - stepIntercept);
    while (!(next <= current) && scale > 1e-10) {
      scale /= 2;
      next = loss(slope - scale * stepSlope, intercept - scale * stepIntercept);
    }
    if (!(next <= current)) break;
    slope -= scale * stepSlope;
    intercept -= scale * stepIntercept;
    const improvement = current - next;
    current = next;
    if (scale * (Math.abs(stepSlope) + Math.abs(stepIntercept)) < 1e-10 || improvement < 1e-12 * Math.max(1, current)) break;
  }
  // Scores unrelated to relevance fit a slope of 0 give or take rounding.
  if (slope < 0 && slope > -1e-9) slope = 0;
  // A negative slope would invert the model's ranking; that means the data, not the model, is wrong.
  if (!(slope >= 0)) throw new Error(`calibration fit gave slope ${slope}: higher raw scores are not more often relevant in these labels`);
  return { method: 'platt', slope, intercept };
}

/**
 * Isotonic regression by pool-adjacent-violators over pairs sorted by raw score. Each pooled block
 * becomes one knot at its mean raw score, so interpolation between knots stays monotone.
 */
export function fitIsotonic(raw: readonly number[], labels: readonly number[]): Calibration {
  if (raw.length === 0) throw new Error('calibration needs labelled pairs');
  const order = raw.map((_, i) => i).sort((a, b) => raw[a]! - raw[b]!);
  const blocks: { sumX: number; sumY: number; count: number }[] = [];
  for (const i of order) {
    blocks.push({ sumX: raw[i]!, sumY: labels[i]! > 0 ? 1 : 0, count: 1 });
    while (blocks.length > 1) {
      const last = blocks[blocks.length - 1]!;
      const previous = blocks[blocks.length - 2]!;
      if (previous.sumY / previous.count < last.sumY / last.count) break;
      previous.sumX += last.sumX;
      previous.sumY += last.sumY;
      previous.count += last.count;
      blocks.pop();
    }
  }
  const x: number[] = [];
  const y: number[] = [];
  for (const block of blocks) {
    const meanX = block.sumX / block.count;
    if (x.length > 0 && meanX <= x[x.length - 1]!) continue;
    x.push(meanX);
    y.push(block.sumY / block.count);
  }
  return { method: 'isotonic', x, y };
}

export interface ReliabilityBand {
  band: string;
  low: number;
  high: number;
  count: number;
  relevant: number;
  shareRelevant: number | null;
}

/** The spec's bands (§2.4) with how many scored pairs fell in each and how many were relevant. */
export function reliabilityTable(scores: readonly number[], labels: readonly number[]): ReliabilityBand[] {
  const edges: [string, number, number][] = [
    ['< 0.1', 0, 0.1],
    ['0.1 – 0.2', 0.1, 0.2],
    ['0.2 – 0.5', 0.2, 0.5],
    ['0.5 – 0.75', 0.5, 0.75],
    ['≥ 0.75', 0.75, Number.POSITIVE_INFINITY],
  ];
  return edges.map(([band, low, high]) => {
    let count = 0;
    let relevant = 0;
    scores.forEach((score, i) => {
      if (score >= low && score < high) {
        count++;
        if (labels[i]! > 0) relevant++;
      }
    });
    return { band, low, high, count, relevant, shareRelevant: count ? relevant / count : null };
  });
}
