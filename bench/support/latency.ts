/** Nearest-rank percentile (q in 0..1) of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], q: number): number {
  if (!samples.length) return NaN;
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
