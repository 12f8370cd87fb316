// A section of `npm run bench`: a named measurement printing rows of figures.

export interface BenchRow {
  metric: string;
  value: string;
}

export interface BenchSection {
  name: string;
  /** `quick` shrinks the workload (used by tests of the bench itself). */
  run(options: { quick: boolean }): Promise<BenchRow[]>;
}
