/** Small statistics helpers for benchmarks. */

/** The p-th percentile (0..100) of the values, by nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median. */
export function median(values: number[]): number {
  return percentile(values, 50);
}

/** A fixed-precision number for tables. */
export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}
