// `mascot ope`: off-policy evaluation of a director on logged decisions.
import { loadConfig } from '../../config.ts';
import { resolvePolicy } from '../../director/resolve.ts';
import { readDirectorFile } from '../../learn/director-model.ts';
import { evidenceFromLogs } from '../../learn/evidence.ts';
import { OPE_DEFAULTS, type Interval } from '../../learn/ope.ts';
import { modelFidelity } from '../../eval/fidelity.ts';
import { rewardWeightsFromEnv } from '../../eval/group-reward.ts';
import { loadPacks, PERSONAS_DIR } from '../../persona/loader.ts';
import { rewardModelFiles } from '../../reward/serve.ts';
import { openDatabase } from '../../store/db.ts';
import { numberFlag, stringFlag, UsageError, type Command } from '../command.ts';

export const fmt = (i: Interval) => `${i.estimate.toFixed(4)}  [${i.low.toFixed(4)}, ${i.high.toFixed(4)}]`;

const ope: Command = {
  name: 'ope',
  summary: 'estimate a director\'s value on logged decisions (IPS, SNIPS, DR) with bootstrap intervals',
  usage: `Usage: mascot ope --policy FILE.onnx|NAME [--pack P] [--baseline NAME] [options]

Estimates how the director would have done on the decisions logged in MASCOT_DB, from their
stored propensities: IPS, SNIPS and doubly robust (with a cross-fitted reward model), with clipped
weights, the effective sample size and 95% bootstrap intervals, next to the logged policies' own
value. The reward of a logged decision is the group reward of what followed it (docs/learning.md).

  --policy P          a .onnx file, onnx@<version>, active, heuristic, round-robin, random or llm
  --baseline B        also estimate B on the same decisions and report the paired DR difference
  --pack P            persona pack (default: the file's pack, else MASCOT_PACK)
  --db FILE           database (default MASCOT_DB)
  --since DATE        only decisions from this date (ISO 8601)
  --limit N           at most N decisions
  --clip M            weight clip (default ${OPE_DEFAULTS.clip})
  --bootstrap B       resamples (default ${OPE_DEFAULTS.bootstrap})
  --min-ess N         warn below this effective sample size (default ${OPE_DEFAULTS.minEss})
  --feedback-weight W weight of human feedback in the logged reward (default 0.5)
  --json              print the full report as JSON`,
  async run(ctx) {
    const spec = stringFlag(ctx.flags, 'policy');
    if (!spec) throw new UsageError('--policy is required');
    const config = loadConfig(ctx.env);
    const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
    const file = spec.startsWith('onnx:') ? spec.slice(5) : spec.endsWith('.onnx') ? spec : undefined;
    const packId = stringFlag(ctx.flags, 'pack') ?? (file ? readDirectorFile(file).info.pack : config.MASCOT_PACK);
    const pack = packs.get(packId);
    if (!pack) throw new UsageError(`--pack: pack "${packId}" not found (available: ${[...packs.keys()].join(', ')})`);
    const sinceText = stringFlag(ctx.flags, 'since');
    const since = sinceText === undefined ? undefined : Date.parse(sinceText);
    if (since !== undefined && Number.isNaN(since)) throw new UsageError(`--since: "${sinceText}" is not a date (use e.g. 2025-03-01)`);
    const db = openDatabase(stringFlag(ctx.flags, 'db') ?? config.MASCOT_DB);
    // Logged turns are scored as mascot eval scores them: fidelity from the persona reward models when there are some.
    const files = rewardModelFiles(config);
    const fidelity = files.length > 0 ? modelFidelity(files) : undefined;
    try {
      const candidate = await resolvePolicy(spec, pack, { config, db });
      const baselineSpec = stringFlag(ctx.flags, 'baseline');
      const baseline = baselineSpec ? await resolvePolicy(baselineSpec, pack, { config, db }) : undefined;
      const evidence = await evidenceFromLogs(db, pack, candidate.policy, {
        baseline: baseline?.policy,
        query: { since, limit: ctx.flags.limit === undefined ? undefined : numberFlag(ctx.flags, 'limit', 0, (n) => Number.isInteger(n) && n > 0) },
        ope: {
          clip: numberFlag(ctx.flags, 'clip', OPE_DEFAULTS.clip, (n) => n >= 1),
          bootstrap: numberFlag(ctx.flags, 'bootstrap', OPE_DEFAULTS.bootstrap, (n) => Number.isInteger(n) && n >= 10),
          minEss: numberFlag(ctx.flags, 'min-ess', OPE_DEFAULTS.minEss, (n) => n >= 0),
        },
        feedbackWeight: numberFlag(ctx.flags, 'feedback-weight', 0.5, (n) => n >= 0 && n <= 1),
        weights: rewardWeightsFromEnv(ctx.env),
        fidelity: fidelity?.scorerFor(pack),
      });
      await candidate.close();
      await baseline?.close();
      if (ctx.flags.json === true) {
        ctx.stdout.write(`${JSON.stringify({ policy: candidate.label, baseline: baseline?.label, pack: pack.id, ...evidence }, null, 2)}\n`);
        return 0;
      }
      const r = evidence.candidate;
      const lines = [
        `Off-policy evaluation of ${candidate.label} on ${evidence.n} logged decisions of pack ${pack.id}${evidence.skipped ? ` (${evidence.skipped} skipped: ${evidence.problems.join('; ')})` : ''}`,
        `  logged value (the policies that chose)  ${fmt(r.logged)}`,
        `  IPS                                     ${fmt(r.ips)}`,
        `  SNIPS                                   ${fmt(r.snips)}`,
        `  DR                                      ${fmt(r.dr)}`,
        `  DR - logged value (paired)              ${fmt(r.drGain)}`,
        `  effective sample size ${r.ess.toFixed(1)} of ${r.n} (largest weight ${r.maxWeight.toFixed(2)}, ${(100 * r.clippedShare).toFixed(1)}% clipped at ${r.options.clip})`,
      ];
      if (evidence.comparison && baseline) {
        lines.push(`  ${baseline.label}: DR ${fmt(evidence.comparison.baseline.dr)}, effective sample size ${evidence.comparison.baseline.ess.toFixed(1)}`);
        lines.push(`  DR difference (candidate - baseline)    ${fmt(evidence.comparison.difference)}`);
      }
      for (const w of [...r.warnings, ...(evidence.comparison?.baseline.warnings.map((w) => `${baseline?.label}: ${w}`) ?? [])]) lines.push(`warning: ${w}`);
      ctx.stdout.write(`${lines.join('\n')}\n`);
      return 0;
    } finally {
      db.close();
      await fidelity?.close();
    }
  },
};

export default ope;
