/** Latency statistics the benchmarks share, in the shape the bench JSON files record them. */

/**
 * The nearest-rank percentile of ascending `sorted` samples: the smallest sample with at least
 * `fraction` of all samples at or below it (NaN if there are none), as the other benches compute it.
 */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

/** Latency percentiles of a list of samples in ms, rounded to the microsecond. */
export function latencySummary(samples: readonly number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction: number) => Math.round(percentile(sorted, fraction) * 1000) / 1000;
  return { p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: at(1) };
}

/**
 * Times `count` runs of `run`, one after another, after `warmUp` untimed ones that let the JIT, caches
 * and connection pools settle; never more warm-up runs than timed ones, so that a quick run stays quick.
 */
export async function sampleLatency(run: (i: number) => Promise<unknown>, { count, warmUp }: { count: number; warmUp: number }) {
  for (let i = 0; i < Math.min(warmUp, count); i++) await run(i);
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await run(i);
    samples.push(performance.now() - started);
  }
  return latencySummary(samples);
}
