// `mascot train reward`: train the persona reward model of a pack from every preference source
// (stored judge/feedback pairs, the persona-example bootstrap and offline-rubric data) and write
// it as ONNX with its training report next to it.
import fs from 'node:fs';
import { loadConfig } from '../../config.ts';
import { saveModel } from '../../learn/onnx.ts';
import { loadPacks, PERSONAS_DIR } from '../../persona/loader.ts';
import { encodeRewardModel } from '../../reward/model.ts';
import { OfflineRubricJudge } from '../../reward/offline-rubric.ts';
import { exampleContexts, examplePreferences, judgeContexts, scenarioContexts, type CandidateContext } from '../../reward/preferences.ts';
import type { AuthoredTurn, PreferencePair } from '../../reward/rubric.ts';
import { FidelityStore } from '../../reward/store.ts';
import { REWARD_TRAINING_DEFAULTS, trainRewardModel, type RewardTrainingReport } from '../../reward/train.ts';
import { resolveSuitePath } from '../../sim/scenario.ts';
import { OfflineGenerator } from '../../speaker/offline.ts';
import { Speaker } from '../../speaker/speaker.ts';
import { openDatabase } from '../../store/db.ts';
import { numberFlag, stringFlag, UsageError, type Command } from '../command.ts';

const trainReward: Command = {
  name: 'train reward',
  summary: 'train the persona reward model of a pack (Bradley-Terry) and write it as ONNX',
  usage: `Usage: mascot train reward --pack P --out FILE [options]

Data (each source is labelled in the report):
  stored pairs   judge and offline-rubric pairs from \`mascot judge\`, 👍/👎 and ratings, from MASCOT_DB (if it exists)
  examples       each persona's few-shot examples against the other personas' (offline bootstrap)
  offline-rubric offline-voice candidates for the example contexts and the pack's scenario suite,
                 scored by the offline rubric scorer (skip with --no-offline)

Options:
  --k N            offline candidates per persona and context (default 4)
  --suite NAME     scenario suite for offline contexts (default: the pack's own, when there is one)
  --epochs N       (default ${REWARD_TRAINING_DEFAULTS.epochs})    --lr X (default ${REWARD_TRAINING_DEFAULTS.lr})    --seed N (default ${REWARD_TRAINING_DEFAULTS.seed})
  --held-out X     share of contexts held out for evaluation (default ${REWARD_TRAINING_DEFAULTS.heldOut})
  --min-margin X   judged pairs need this mean-score difference (default 0.5)
  --no-db          ignore MASCOT_DB

Writes FILE and FILE's report (.report.json); prints held-out pairwise and persona-identification accuracy.`,
  async run(ctx) {
    const packId = stringFlag(ctx.flags, 'pack');
    const out = stringFlag(ctx.flags, 'out');
    if (!packId) throw new UsageError('--pack is required');
    if (!out) throw new UsageError('--out is required');
    const config = loadConfig(ctx.env);
    const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
    const pack = packs.get(packId);
    if (!pack) throw new UsageError(`--pack: "${packId}" is not a pack (available: ${[...packs.keys()].join(', ')})`);
    const k = numberFlag(ctx.flags, 'k', 4, (n) => Number.isInteger(n) && n >= 1 && n <= 16);
    const minMargin = numberFlag(ctx.flags, 'min-margin', 0.5, (n) => n >= 0 && n <= 4);
    const options = {
      epochs: numberFlag(ctx.flags, 'epochs', REWARD_TRAINING_DEFAULTS.epochs, (n) => Number.isInteger(n) && n >= 1 && n <= 1000),
      lr: numberFlag(ctx.flags, 'lr', REWARD_TRAINING_DEFAULTS.lr, (n) => n > 0 && n < 1),
      seed: numberFlag(ctx.flags, 'seed', REWARD_TRAINING_DEFAULTS.seed, Number.isInteger),
      heldOut: numberFlag(ctx.flags, 'held-out', REWARD_TRAINING_DEFAULTS.heldOut, (n) => n > 0 && n < 1),
    };

    const pairs: PreferencePair[] = [];
    const authored: AuthoredTurn[] = [];
    const bootstrap = examplePreferences(pack);
    pairs.push(...bootstrap.pairs);
    authored.push(...bootstrap.authored);

    if (ctx.flags['no-db'] !== true && fs.existsSync(config.MASCOT_DB)) {
      const db = openDatabase(config.MASCOT_DB);
      try {
        const store = new FidelityStore(db);
        pairs.push(...store.pairs(pack.id), ...store.feedbackPairs(pack.id, minMargin));
        authored.push(...store.judgedAuthored(pack.id), ...store.loggedAuthored(pack.id));
      } finally {
        db.close();
      }
    }

    if (ctx.flags['no-offline'] !== true) {
      const contexts: CandidateContext[] = exampleContexts(pack);
      const suite = stringFlag(ctx.flags, 'suite') ?? (fs.existsSync(resolveSuitePath(pack.id)) ? pack.id : undefined);
      if (suite) contexts.push(...scenarioContexts(suite));
      const run = await judgeContexts({ pack, contexts, speaker: new Speaker(new OfflineGenerator({ seed: options.seed })), judge: new OfflineRubricJudge(), k, minMargin, runId: `train-${options.seed}` });
      for (const set of run.sets) pairs.push(...set.pairs), authored.push(...set.authored);
      ctx.stdout.write(`offline-rubric data: ${contexts.length} contexts${suite ? ` (examples + suite ${suite})` : ' (examples)'}, ${run.sets.reduce((n, s) => n + s.pairs.length, 0)} pairs\n`);
    }

    const trained = trainRewardModel({ pack, pairs, authored, options, onEpoch: (e, loss) => ctx.stderr.write(`\repoch ${e}/${options.epochs} loss ${loss.toFixed(4)}`) });
    ctx.stderr.write('\n');
    saveModel(out, encodeRewardModel(trained.net, trained.info));
    const reportFile = out.replace(/\.onnx$/, '') + '.report.json';
    fs.writeFileSync(reportFile, `${JSON.stringify(trained.report, null, 2)}\n`);
    ctx.stdout.write(`${formatReport(trained.report)}\nwrote ${out} (${(fs.statSync(out).size / 1024).toFixed(0)} KiB, version ${trained.info.version}) and ${reportFile}\n`);
    return 0;
  },
};

export function formatReport(r: RewardTrainingReport): string {
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
  const lines = [
    `persona reward model for ${r.pack} (${r.personas.join(', ')}), trained in ${r.seconds.toFixed(1)} s`,
    `pairs: ${r.pairs.train} train, ${r.pairs.heldOut} held out; by source: ${Object.entries(r.pairs.bySource).map(([s, c]) => `${s} ${c.train}+${c.heldOut}`).join(', ')}`,
    `held-out pairwise accuracy: ${pct(r.pairwise.heldOut.accuracy)} of ${r.pairwise.heldOut.n} (train ${pct(r.pairwise.train.accuracy)})`,
    ...Object.entries(r.pairwise.heldOutBySource).map(([s, a]) => `  ${s}: ${pct(a.accuracy)} of ${a.n}`),
    `held-out persona identification: ${pct(r.identification.heldOut.accuracy)} of ${r.identification.heldOut.n} (chance ${pct(r.identification.chance)})`,
    ...Object.entries(r.identification.heldOutBySource).map(([s, a]) => `  ${s}: ${pct(a.accuracy)} of ${a.n}`),
  ];
  return lines.join('\n');
}

export default trainReward;
