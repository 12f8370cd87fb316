// `mascot train director` end to end: gather start states (scenario suite played under the
// training seeds, plus logged decisions from SQLite with their human feedback), run GRPO, and write
// the ONNX director with a training report next to it:
//   <out>.onnx                 the director (its metadata names pack, features, version, training)
//   <out>.training.json        configuration, start counts, per-iteration statistics
//   <out>.training.svg         reward and KL curves
//   <out>.training.md          the same in a table
// Checkpoints (loadable director files) go to <checkpoint dir>/<version>/iteration-NNNN.onnx.
import fs from 'node:fs';
import path from 'node:path';
import type { Policy } from '../director/policy.ts';
import type { FidelityScorer, RewardWeights } from '../eval/group-reward.ts';
import type { Pack } from '../persona/schema.ts';
import type { Generator } from '../speaker/generator.ts';
import { startFromLogged, startStates, type SimStart } from '../sim/environment.ts';
import type { Scenario } from '../sim/scenario.ts';
import type { Db } from '../store/db.ts';
import { svgDocument } from './chart.ts';
import { encodeDirector, type DirectorModelInfo } from './director-model.ts';
import { DirectorFeaturizer } from './features.ts';
import { trainDirector, type GrpoConfig, type IterationStats, type TrainingStart } from './grpo.ts';
import { loadLoggedDecisions } from './logged.ts';
import type { DirectorNetwork } from './network.ts';
import { saveModel } from './onnx.ts';

export interface TrainDirectorRequest {
  pack: Pack;
  suiteName: string;
  scenarios: readonly Scenario[];
  /** Seeds the scenarios are played under to make start states (keep them apart from evaluation seeds). */
  seeds: number[];
  /** Keep every n-th decision point of the played scenarios. */
  every?: number;
  /** Policies that play the scenarios to make start states (default: the teacher only). */
  startPolicies?: { name: string; policy: Policy }[];
  /** Logged decisions to add as start states (none without a database). */
  db?: Db;
  loggedLimit?: number;
  config: GrpoConfig;
  teacher: Policy;
  out: string;
  version: string;
  init?: DirectorNetwork;
  checkpointDir?: string;
  checkpointEvery?: number;
  generator?: (seed: number) => Generator;
  weights?: Partial<RewardWeights>;
  fidelity?: FidelityScorer;
  /** Progress lines (the CLI draws a bar from them). */
  progress?: (event: ProgressEvent) => void;
}

export type ProgressEvent =
  | { kind: 'starts'; simulated: number; logged: number; skipped: number; problems: string[] }
  | { kind: 'distill'; epoch: number; of: number; loss: number }
  | { kind: 'iteration'; stats: IterationStats; of: number }
  | { kind: 'checkpoint'; file: string };

export interface TrainingReport {
  pack: string;
  version: string;
  suite: string;
  seeds: number[];
  starts: { simulated: number; logged: number; loggedWithFeedback: number; loggedSkipped: number };
  config: GrpoConfig;
  distillLoss: number[];
  history: IterationStats[];
  seconds: number;
  statesPerSecond: number;
  files: { model: string; report: string; chart: string; summary: string };
}

export async function trainDirectorToFile(req: TrainDirectorRequest): Promise<TrainingReport> {
  const began = performance.now();
  const featurizer = new DirectorFeaturizer(req.pack, req.init?.shape.buckets ?? req.config.buckets);
  // States the director will meet come from several ways of playing the conversations.
  const simulated: SimStart[] = [];
  for (const { name, policy } of req.startPolicies ?? [{ name: 'teacher', policy: req.teacher }]) {
    for (const start of await startStates(req.pack, req.scenarios, req.seeds, { every: req.every ?? 1, policy })) simulated.push({ ...start, id: `${name}:${start.id}` });
  }
  const starts: TrainingStart[] = simulated.map((start) => ({ start }));

  let logged = 0;
  let withFeedback = 0;
  let skipped = 0;
  let problems: string[] = [];
  if (req.db) {
    const set = loadLoggedDecisions(req.db, req.pack, featurizer.slots, { limit: req.loggedLimit });
    skipped = set.skipped;
    problems = set.problems;
    for (const d of set.decisions) {
      try {
        const start = startFromLogged(req.pack, d.rawState, { id: `log/${d.id}`, seed: d.id });
        starts.push({ start, ...(d.feedback !== undefined ? { feedback: { action: d.action, value: d.feedback } } : {}) });
        logged++;
        if (d.feedback !== undefined) withFeedback++;
      } catch (err) {
        skipped++;
        if (problems.length < 5) problems.push(`decision ${d.id}: ${(err as Error).message}`);
      }
    }
  }
  req.progress?.({ kind: 'starts', simulated: simulated.length, logged, skipped, problems });

  const base = req.out.replace(/\.onnx$/, '');
  const info = (net: DirectorNetwork, iteration?: number): DirectorModelInfo => ({
    pack: req.pack.id,
    layout: featurizer.layout,
    shape: net.shape,
    policyVersion: iteration === undefined ? req.version : `${req.version}-it${iteration}`,
    training: {
      algorithm: 'grpo',
      suite: req.suiteName,
      seeds: req.seeds,
      startPolicies: (req.startPolicies ?? []).map((p) => p.name),
      starts: { simulated: simulated.length, logged },
      iterations: iteration ?? req.config.iterations,
      config: req.config,
      trainedAt: new Date().toISOString(),
    },
  });
  const result = await trainDirector({
    featurizer,
    starts,
    config: req.config,
    teacher: req.teacher,
    init: req.init,
    generator: req.generator,
    weights: req.weights,
    fidelity: req.fidelity,
    onDistillEpoch: (epoch, loss) => req.progress?.({ kind: 'distill', epoch, of: req.config.distillEpochs, loss }),
    onIteration: (stats) => req.progress?.({ kind: 'iteration', stats, of: req.config.iterations }),
    checkpointEvery: req.checkpointEvery,
    checkpoint: req.checkpointDir
      ? (net, iteration) => {
          const file = path.join(req.checkpointDir!, req.version, `iteration-${String(iteration).padStart(4, '0')}.onnx`);
          saveModel(file, encodeDirector(net, info(net, iteration)));
          req.progress?.({ kind: 'checkpoint', file });
        }
      : undefined,
  });

  const model = `${base}.onnx`;
  saveModel(model, encodeDirector(result.net, info(result.net)));
  const seconds = (performance.now() - began) / 1000;
  const history = result.history;
  const trainedStates = history.reduce((a, s) => a + s.states, 0);
  const trainSeconds = history.reduce((a, s) => a + s.seconds, 0);
  const report: TrainingReport = {
    pack: req.pack.id,
    version: req.version,
    suite: req.suiteName,
    seeds: req.seeds,
    starts: { simulated: simulated.length, logged, loggedWithFeedback: withFeedback, loggedSkipped: skipped },
    config: req.config,
    distillLoss: result.distillLoss,
    history,
    seconds,
    statesPerSecond: trainSeconds > 0 ? trainedStates / trainSeconds : 0,
    files: { model, report: `${base}.training.json`, chart: `${base}.training.svg`, summary: `${base}.training.md` },
  };
  fs.writeFileSync(report.files.report, `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(report.files.chart, trainingChart(report));
  fs.writeFileSync(report.files.summary, trainingSummary(report));
  return report;
}

export function trainingChart(r: TrainingReport): string {
  const at = (key: keyof IterationStats): [number, number][] => r.history.map((s) => [s.iteration, s[key]]);
  return svgDocument([
    { title: `Director ${r.version}: group reward of sampled actions`, xLabel: 'GRPO iteration', yLabel: 'mean group reward', series: [{ name: 'reward (mean over G samples)', points: at('reward') }] },
    { title: 'KL(pi_theta || pi_ref) and entropy', xLabel: 'GRPO iteration', yLabel: 'nats', series: [{ name: 'KL to reference', points: at('kl') }, { name: 'entropy', points: at('entropy') }] },
  ]);
}

export function trainingSummary(r: TrainingReport): string {
  const rows = r.history
    .filter((s, i) => i === 0 || s.iteration % Math.max(1, Math.round(r.history.length / 10)) === 0 || i === r.history.length - 1)
    .map((s) => `| ${s.iteration} | ${s.reward.toFixed(4)} | ${s.kl.toFixed(4)} | ${s.entropy.toFixed(3)} | ${(100 * s.clipFraction).toFixed(1)}% | ${(100 * s.signal).toFixed(0)}% | ${s.statesPerSecond.toFixed(1)} |`);
  return [
    `# Training report: director ${r.version}`,
    '',
    `Pack **${r.pack}**, suite **${r.suite}**, training seeds ${r.seeds.join(', ')}; ${r.starts.simulated} simulated start states, ${r.starts.logged} logged (${r.starts.loggedWithFeedback} with human feedback, ${r.starts.loggedSkipped} skipped).`,
    `Warm start: ${r.distillLoss.length} epoch(s) imitating the heuristic (cross-entropy ${r.distillLoss.map((l) => l.toFixed(3)).join(' -> ') || 'n/a'}).`,
    `GRPO: G=${r.config.groupSize}, eps=${r.config.clipEps}, beta=${r.config.beta}, lr=${r.config.lr}, block=${r.config.blockTurns} turns, ${r.config.iterations} iterations of ${r.config.batchStates} states, ${r.config.updatesPerBatch} pass(es) each.`,
    `Took ${r.seconds.toFixed(1)} s (${r.statesPerSecond.toFixed(1)} states/s in GRPO, rollouts included).`,
    '',
    `![reward and KL](${path.basename(r.files.chart)})`,
    '',
    '| iteration | reward | KL | entropy | clipped | groups with signal | states/s |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
}
