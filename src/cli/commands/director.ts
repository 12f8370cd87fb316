// `mascot director list|promote|rollback`: the registry of learned director versions. Promotion
// is gated by offline evidence; running processes pick up a change within MASCOT_DIRECTOR_POLL_MS.
import os from 'node:os';
import { loadConfig, type Config } from '../../config.ts';
import { builtinModelFile } from '../../director/learned.ts';
import { resolvePolicy } from '../../director/resolve.ts';
import { DirectorVersions } from '../../director/versions.ts';
import { readDirectorFile } from '../../learn/director-model.ts';
import { evidenceFromLogs, evidenceFromSimulation } from '../../learn/evidence.ts';
import { modelFidelity } from '../../eval/fidelity.ts';
import { rewardWeightsFromEnv } from '../../eval/group-reward.ts';
import { loadPacks, PERSONAS_DIR } from '../../persona/loader.ts';
import { rewardModelFiles } from '../../reward/serve.ts';
import type { Pack } from '../../persona/schema.ts';
import { loadSuite } from '../../sim/scenario.ts';
import { openDatabase, type Db } from '../../store/db.ts';
import { numberFlag, stringFlag, UsageError, type Command, type CommandContext } from '../command.ts';
import { fmt } from './ope.ts';
import { parseSeeds } from './train.ts';

export const DEFAULT_PROMOTION_SEEDS = '1-4';

function open(ctx: CommandContext): { config: Config; packs: Map<string, Pack>; db: Db; versions: DirectorVersions } {
  const config = loadConfig(ctx.env);
  const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
  const db = openDatabase(stringFlag(ctx.flags, 'db') ?? config.MASCOT_DB);
  return { config, packs, db, versions: new DirectorVersions(db, config.MASCOT_DIRECTOR_DIR) };
}

const actorOf = (ctx: CommandContext) => stringFlag(ctx.flags, 'actor') ?? `cli:${ctx.env.USER ?? os.userInfo().username}`;

const list: Command = {
  name: 'director list',
  summary: 'list registered director versions, the active one per pack, and recent promotions',
  usage: `Usage: mascot director list [--pack P] [--db FILE]`,
  async run(ctx) {
    const { packs, db, versions } = open(ctx);
    try {
      const only = stringFlag(ctx.flags, 'pack');
      for (const pack of packs.values()) {
        if (only && pack.id !== only) continue;
        const active = versions.active(pack.id);
        const shipped = builtinModelFile(pack.id);
        let builtin = 'none';
        try {
          builtin = `${readDirectorFile(shipped).info.policyVersion} (${shipped})`;
        } catch {
          // no built-in model for this pack
        }
        ctx.stdout.write(`pack ${pack.id}: onnx serves ${active ? `${active.version} (promoted)` : builtin !== 'none' ? `the built-in ${builtin}` : 'nothing (the heuristic decides)'}\n`);
        for (const v of versions.list(pack.id))
          ctx.stdout.write(`  ${v.version === active?.version ? '*' : ' '} ${v.version}  registered ${new Date(v.registeredAt).toISOString()}  ${v.file}\n`);
        for (const a of versions.history(pack.id).slice(-5))
          ctx.stdout.write(`    ${new Date(a.at).toISOString()} ${a.action} ${a.previous ?? '(built-in)'} -> ${a.version ?? '(built-in)'} by ${a.actor}: ${a.reason}\n`);
      }
      return 0;
    } finally {
      db.close();
    }
  },
};

const promote: Command = {
  name: 'director promote',
  summary: 'register a director file and make it active if offline evaluation says it is better',
  usage: `Usage: mascot director promote FILE.onnx [--force] [--reason TEXT] [options]

Registers the file (copied to MASCOT_DIRECTOR_DIR), then compares it with the pack's active
director: on logged decisions (off-policy, doubly robust) when their effective sample size is at
least --min-ess, otherwise in simulation on the pack's scenario suite with --seeds. It becomes active
only if the paired difference's 95% interval is above 0 and its estimate at least --margin
(MASCOT_PROMOTE_MARGIN). --force activates it anyway; the evidence and the reason are recorded in the
audit trail. Running processes switch within MASCOT_DIRECTOR_POLL_MS, without a restart.

  --evidence auto|logs|simulation   where the evidence comes from (default auto)
  --seeds LIST      simulation seeds (default ${DEFAULT_PROMOTION_SEEDS}; keep them apart from training seeds)
  --suite NAME|FILE scenario suite (default: the pack's id)
  --margin X        required improvement (default MASCOT_PROMOTE_MARGIN)
  --min-ess N       least effective sample size to decide from logs (default 200)
  --reason TEXT     why, for the audit trail; --actor NAME who (default cli:<user>)`,
  async run(ctx) {
    const file = ctx.args[0];
    if (!file) throw new UsageError('the director file to promote is required');
    const { config, packs, db, versions } = open(ctx);
    let fidelity: ReturnType<typeof modelFidelity> | undefined;
    try {
      const { info } = readDirectorFile(file);
      const pack = packs.get(info.pack);
      if (!pack) throw new Error(`${file} is a director for pack "${info.pack}", which is not loaded (available: ${[...packs.keys()].join(', ')})`);
      const mode = stringFlag(ctx.flags, 'evidence') ?? 'auto';
      if (!['auto', 'logs', 'simulation'].includes(mode)) throw new UsageError('--evidence must be auto, logs or simulation');
      const margin = numberFlag(ctx.flags, 'margin', config.MASCOT_PROMOTE_MARGIN, (n) => n >= 0);
      const minEss = numberFlag(ctx.flags, 'min-ess', 200, (n) => n >= 0);
      const force = ctx.flags.force === true;

      // Conversations and logged turns are scored as mascot eval scores them: fidelity from the persona reward models when there are some.
      const files = rewardModelFiles(config);
      fidelity = files.length > 0 ? modelFidelity(files) : undefined;
      const scoring = { weights: rewardWeightsFromEnv(ctx.env), fidelity: fidelity?.scorerFor(pack) };
      const candidate = await resolvePolicy(`onnx:${file}`, pack, { config, db });
      const active = await resolvePolicy('active', pack, { config, db });
      if (active.policy.version === info.policyVersion && active.policy.id === 'onnx') throw new Error(`director ${info.policyVersion} is already active for pack ${pack.id}`);
      ctx.stdout.write(`candidate ${candidate.label}\nactive    ${active.label}\n`);

      let evidence: Record<string, unknown> | undefined;
      let difference: { estimate: number; low: number; high: number } | undefined;
      if (mode !== 'simulation') {
        try {
          const logs = await evidenceFromLogs(db, pack, candidate.policy, { baseline: active.policy, ope: { minEss }, ...scoring });
          const c = logs.comparison!;
          const ess = Math.min(c.candidate.ess, c.baseline.ess);
          ctx.stdout.write(`logs: ${logs.n} decisions, DR candidate ${fmt(c.candidate.dr)}, active ${fmt(c.baseline.dr)}, effective sample size ${ess.toFixed(1)}\n`);
          if (ess >= minEss || mode === 'logs') {
            difference = c.difference;
            evidence = { source: 'logs', decisions: logs.n, candidate: c.candidate.dr, active: c.baseline.dr, difference, ess, warnings: [...c.candidate.warnings, ...c.baseline.warnings] };
          } else ctx.stdout.write(`logs: effective sample size below ${minEss}; comparing in simulation\n`);
        } catch (err) {
          if (mode === 'logs') throw err;
          ctx.stdout.write(`logs: ${(err as Error).message}\n`);
        }
      }
      if (!evidence) {
        const suite = loadSuite(stringFlag(ctx.flags, 'suite') ?? pack.id);
        const seeds = parseSeeds(stringFlag(ctx.flags, 'seeds') ?? DEFAULT_PROMOTION_SEEDS);
        const trainedOn = (info.training.seeds as number[] | undefined) ?? [];
        const overlap = seeds.filter((s) => trainedOn.includes(s));
        if (overlap.length) ctx.stdout.write(`warning: seeds ${overlap.join(',')} were used to train this director; the comparison is optimistic\n`);
        const sim = await evidenceFromSimulation(pack, suite.scenarios, seeds, candidate.policy, active.policy, scoring);
        difference = sim.difference;
        evidence = { source: 'simulation', suite: suite.name, seeds, conversations: sim.conversations, candidate: sim.candidate, active: sim.baseline, difference };
        ctx.stdout.write(`simulation: ${sim.conversations} conversations, candidate ${fmt(sim.candidate)}, active ${fmt(sim.baseline)}\n`);
      }
      await candidate.close();
      await active.close();

      const better = difference!.low > 0 && difference!.estimate >= margin;
      ctx.stdout.write(`difference (candidate - active) ${fmt(difference!)}; required: interval above 0 and at least ${margin}\n`);
      if (!better && !force) {
        ctx.stdout.write(`not promoted: the evidence does not show ${info.policyVersion} is better (use --force to activate it anyway)\n`);
        return 1;
      }
      const { version } = versions.register(file);
      const reason = stringFlag(ctx.flags, 'reason') ?? (better ? 'offline evaluation beat the active director' : 'forced without sufficient evidence');
      versions.activate(version, better ? 'promote' : 'force', actorOf(ctx), reason, { ...evidence, margin, activeBefore: active.label });
      ctx.stdout.write(`${better ? 'promoted' : 'forced'}: ${version.version} is now active for pack ${pack.id} (running processes switch within ${config.MASCOT_DIRECTOR_POLL_MS} ms)\n`);
      return 0;
    } finally {
      db.close();
      await fidelity?.close();
    }
  },
};

const rollback: Command = {
  name: 'director rollback',
  summary: 'return a pack to the director version active before the current one',
  usage: `Usage: mascot director rollback [--pack P] [--reason TEXT] [--actor NAME]`,
  async run(ctx) {
    const { config, db, versions } = open(ctx);
    try {
      const pack = stringFlag(ctx.flags, 'pack') ?? config.MASCOT_PACK;
      const a = versions.rollback(pack, actorOf(ctx), stringFlag(ctx.flags, 'reason') ?? 'rolled back from the command line');
      ctx.stdout.write(`rolled back pack ${pack}: ${a.previous} -> ${a.version ?? 'the built-in director'}\n`);
      return 0;
    } finally {
      db.close();
    }
  },
};

export default [list, promote, rollback];
