// Human-like pacing: the pause before a bot turn grows with its length, as if it were typed,
// around the configured base (short replies come sooner, long ones later, within 0.5x..2.5x).
export function pacingDelay(baseMs: number, text: string): number {
  if (baseMs <= 0) return 0;
  const factor = Math.min(2.5, Math.max(0.5, text.length / 160));
  return Math.round(baseMs * factor);
}
