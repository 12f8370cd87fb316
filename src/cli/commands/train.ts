// `mascot train director`: GRPO training of the learned director on the scenario suite (and logged
// sessions), written as an ONNX file with its training report.
import fs from 'node:fs';
import { loadConfig } from '../../config.ts';
import { HeuristicPolicy } from '../../director/heuristic.ts';
import { builtinPolicies } from '../../director/registry.ts';
import { modelFidelity } from '../../eval/fidelity.ts';
import { parseRewardWeights, rewardWeightsFromEnv } from '../../eval/group-reward.ts';
import { rewardModelFiles } from '../../reward/serve.ts';
import { decodeDirector, readDirectorFile } from '../../learn/director-model.ts';
import { DirectorFeaturizer, layoutMismatch } from '../../learn/features.ts';
import { GRPO_DEFAULTS, type GrpoConfig } from '../../learn/grpo.ts';
import { trainDirectorToFile, type ProgressEvent } from '../../learn/train-director.ts';
import { createLogger } from '../../log.ts';
import { loadPacks, PERSONAS_DIR } from '../../persona/loader.ts';
import { createGenerator } from '../../runtime.ts';
import { loadSuite } from '../../sim/scenario.ts';
import { openDatabase } from '../../store/db.ts';
import { numberFlag, stringFlag, UsageError, type Command, type CommandContext } from '../command.ts';

export const DEFAULT_TRAINING_SEEDS = '101-108';

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** "1-8", "3,5,9" or "1-4,10" -> [..]; a UsageError names the flag. */
export function parseSeeds(text: string, flag = 'seeds'): number[] {
  const seeds: number[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new UsageError(`--${flag}: "${part}" is not a seed or a range like 1-8`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to - from > 10_000) throw new UsageError(`--${flag}: "${part}" is not an increasing range of at most 10000 seeds`);
    for (let s = from; s <= to; s++) seeds.push(s);
  }
  if (seeds.length === 0) throw new UsageError(`--${flag} needs at least one seed`);
  return [...new Set(seeds)];
}

const INTEGER_SETTINGS = new Set<keyof GrpoConfig>(['groupSize', 'blockTurns', 'iterations', 'batchStates', 'updatesPerBatch', 'buckets', 'emb', 'hidden', 'distillEpochs', 'seed']);

function grpoConfig(flags: CommandContext['flags']): GrpoConfig {
  const config = { ...GRPO_DEFAULTS } as GrpoConfig;
  for (const key of Object.keys(GRPO_DEFAULTS) as (keyof GrpoConfig)[]) {
    const integer = INTEGER_SETTINGS.has(key);
    config[key] = numberFlag(flags, kebab(key), GRPO_DEFAULTS[key], (n) => Number.isFinite(n) && n >= 0 && (!integer || Number.isInteger(n)));
  }
  if (config.groupSize < 2) throw new UsageError('--group-size must be at least 2 (advantages compare actions within a group)');
  if (!(config.clipEps > 0 && config.clipEps < 1)) throw new UsageError('--clip-eps must be between 0 and 1');
  if (config.lr <= 0 || config.lr > 1) throw new UsageError('--lr must be in (0, 1]');
  if (config.distillSmoothing > 1) throw new UsageError('--distill-smoothing must be between 0 and 1');
  if (config.buckets < 2 || (config.buckets & (config.buckets - 1)) !== 0) throw new UsageError('--buckets must be a power of two');
  if (config.batchStates < 1 || config.emb < 1 || config.hidden < 1 || config.blockTurns < 1) throw new UsageError('--batch-states, --emb, --hidden and --block-turns must be at least 1');
  return config;
}

const defaultsText = Object.entries(GRPO_DEFAULTS)
  .map(([k, v]) => `--${kebab(k)} ${v}`)
  .join('  ');

const trainDirector: Command = {
  name: 'train director',
  summary: 'train the learned director with GRPO in simulation (and on logged sessions); writes an ONNX file',
  usage: `Usage: mascot train director --out FILE.onnx [--pack P] [--suite NAME|FILE] [--seeds ${DEFAULT_TRAINING_SEEDS}] [options]

Plays the scenario suite under the training seeds to collect start states (points before a
director decision), adds logged decisions from the database (with their human feedback), warm-starts
by imitating the heuristic, then runs GRPO: G actions per state, each rolled out for a block of turns
with the offline voice and simulated person, scored by the group reward. Keep the training seeds
apart from the seeds you evaluate with (mascot eval).

  --out FILE            the director to write (a training report goes next to it)
  --pack P              persona pack (default MASCOT_PACK)
  --suite NAME|FILE     scenario suite (default: the pack's id)
  --seeds LIST          training seeds, e.g. 101-108 or 1,4,9 (default ${DEFAULT_TRAINING_SEEDS})
  --every N             keep every n-th decision point of the played scenarios (default 2)
  --start-policies LIST policies that play the scenarios to make start states (default heuristic,round-robin,random)
  --db FILE             logged sessions (default MASCOT_DB when that file exists); --no-logged skips them
  --logged-limit N      at most N logged decisions
  --version NAME        policy version recorded in the file (default <pack>-grpo-<date>)
  --init FILE           continue from a director file instead of a fresh warm start
  --checkpoint-dir DIR  where checkpoints go (default data/checkpoints); --checkpoint-every N (default 10)
  --voice offline|model rollouts with the offline voice (default) or the model at MASCOT_LLM_BASE_URL
  --reward-weights W    e.g. engagement=0.5,overTalk=0.4 (default MASCOT_REWARD_WEIGHTS)
  --fidelity model|check fidelity in the group reward: the persona reward models (default, as mascot
                        eval scores it) or the role/strategy check
Hyperparameters (defaults): ${defaultsText}`,
  async run(ctx) {
    const out = stringFlag(ctx.flags, 'out');
    if (!out) throw new UsageError('--out FILE.onnx is required');
    const config = loadConfig(ctx.env);
    const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
    const packId = stringFlag(ctx.flags, 'pack') ?? config.MASCOT_PACK;
    const pack = packs.get(packId);
    if (!pack) throw new UsageError(`--pack: pack "${packId}" not found (available: ${[...packs.keys()].join(', ')})`);
    const grpo = grpoConfig(ctx.flags);
    const suite = loadSuite(stringFlag(ctx.flags, 'suite') ?? pack.id);
    if (suite.pack !== pack.id) throw new UsageError(`--suite: suite "${suite.name}" runs with pack "${suite.pack}", not "${pack.id}"`);
    const seeds = parseSeeds(stringFlag(ctx.flags, 'seeds') ?? DEFAULT_TRAINING_SEEDS);
    const weightsFlag = stringFlag(ctx.flags, 'reward-weights');
    const weights = weightsFlag ? parseRewardWeights(weightsFlag, '--reward-weights') : rewardWeightsFromEnv(ctx.env);
    const voice = stringFlag(ctx.flags, 'voice') ?? 'offline';
    if (voice !== 'offline' && voice !== 'model') throw new UsageError('--voice must be offline or model');
    if (voice === 'model' && !config.MASCOT_LLM_BASE_URL) throw new UsageError('--voice model needs MASCOT_LLM_BASE_URL (an OpenAI-compatible endpoint)');
    const fidelityKind = stringFlag(ctx.flags, 'fidelity') ?? 'model';
    if (fidelityKind !== 'model' && fidelityKind !== 'check') throw new UsageError('--fidelity must be model or check');
    const fidelity = fidelityKind === 'model' && rewardModelFiles(config).length > 0 ? modelFidelity(rewardModelFiles(config)) : undefined;
    const log = createLogger(config.MASCOT_LOG_LEVEL);
    const modelVoice = voice === 'model' ? createGenerator(config, log) : undefined;

    let init;
    const initFile = stringFlag(ctx.flags, 'init');
    if (initFile) {
      const { bytes, info } = readDirectorFile(initFile);
      if (info.pack !== pack.id) throw new UsageError(`--init: ${initFile} is a director for pack "${info.pack}", not "${pack.id}"`);
      const why = layoutMismatch(info.layout, new DirectorFeaturizer(pack, info.layout.buckets).layout);
      if (why) throw new UsageError(`--init: ${initFile} cannot continue training for pack "${pack.id}": ${why}`);
      init = decodeDirector(bytes, initFile).net;
    }

    const dbFile = ctx.flags['no-logged'] === true ? undefined : (stringFlag(ctx.flags, 'db') ?? (fs.existsSync(config.MASCOT_DB) ? config.MASCOT_DB : undefined));
    const db = dbFile ? openDatabase(dbFile) : undefined;
    const version = stringFlag(ctx.flags, 'version') ?? `${pack.id}-grpo-${new Date().toISOString().slice(0, 16).replace(/[-:T]/g, '')}`;
    if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(version)) throw new UsageError(`--version: "${version}" must be lowercase letters, digits, dots, dashes and underscores`);

    const bar = progressBar(ctx.stderr);
    try {
      const report = await trainDirectorToFile({
        pack,
        suiteName: suite.name,
        scenarios: suite.scenarios,
        seeds,
        every: numberFlag(ctx.flags, 'every', 2, (n) => Number.isInteger(n) && n >= 1),
        startPolicies: (stringFlag(ctx.flags, 'start-policies') ?? 'heuristic,round-robin,random').split(',').map((name) => {
          const policy = builtinPolicies().get(name.trim());
          if (!policy) throw new UsageError(`--start-policies: "${name}" is not one of ${[...builtinPolicies().keys()].join(', ')}`);
          return { name: name.trim(), policy };
        }),
        db,
        loggedLimit: ctx.flags['logged-limit'] === undefined ? undefined : numberFlag(ctx.flags, 'logged-limit', 0, (n) => Number.isInteger(n) && n >= 0),
        config: grpo,
        teacher: new HeuristicPolicy(),
        out,
        version,
        init,
        checkpointDir: stringFlag(ctx.flags, 'checkpoint-dir') ?? 'data/checkpoints',
        checkpointEvery: numberFlag(ctx.flags, 'checkpoint-every', 10, (n) => Number.isInteger(n) && n >= 1),
        generator: modelVoice ? () => modelVoice : undefined,
        weights,
        fidelity: fidelity?.scorerFor(pack),
        progress: bar,
      });
      ctx.stdout.write(
        [
          `wrote ${report.files.model} (director ${report.version} for pack ${report.pack})`,
          `report: ${report.files.summary}, ${report.files.chart}, ${report.files.report}`,
          `reward ${report.history[0]?.reward.toFixed(4) ?? 'n/a'} -> ${report.history.at(-1)?.reward.toFixed(4) ?? 'n/a'}, KL ${report.history.at(-1)?.kl.toFixed(4) ?? 'n/a'}, ${report.statesPerSecond.toFixed(1)} states/s, ${report.seconds.toFixed(1)} s`,
          `next: mascot eval --policies heuristic,onnx:${report.files.model} (with seeds other than ${seeds.join(',')}), then mascot director promote ${report.files.model}`,
          '',
        ].join('\n'),
      );
      return 0;
    } finally {
      db?.close();
      await fidelity?.close();
    }
  },
};

/** Progress on stderr: a redrawn bar on a terminal, one line per step otherwise. */
function progressBar(stream: NodeJS.WritableStream & { isTTY?: boolean }): (e: ProgressEvent) => void {
  const tty = stream.isTTY === true;
  return (e) => {
    switch (e.kind) {
      case 'starts':
        stream.write(`start states: ${e.simulated} simulated, ${e.logged} logged${e.skipped ? ` (${e.skipped} logged decisions skipped: ${e.problems.join('; ')})` : ''}\n`);
        return;
      case 'distill':
        stream.write(`warm start ${e.epoch}/${e.of}: cross-entropy to the heuristic ${e.loss.toFixed(4)}\n`);
        return;
      case 'checkpoint':
        stream.write(`${tty ? '\n' : ''}checkpoint ${e.file}\n`);
        return;
      case 'iteration': {
        const s = e.stats;
        const width = 30;
        const done = Math.round((s.iteration / e.of) * width);
        const line = `[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${s.iteration}/${e.of}  reward ${s.reward.toFixed(4)}  KL ${s.kl.toFixed(4)}  clipped ${(100 * s.clipFraction).toFixed(0)}%  ${s.statesPerSecond.toFixed(1)} states/s`;
        stream.write(tty ? `\r${line}${s.iteration === e.of ? '\n' : ''}` : `${line}\n`);
      }
    }
  };
}

export default [trainDirector];
