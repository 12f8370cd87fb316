// `mascot eval`: run scenario suites with several director policies (and the paper's ablations)
// under the same seeds and write a report folder: report.md (tables shaped like the MASCOT paper's),
// results.json (every number), conversations.jsonl (every transcript) and charts/*.svg.
import path from 'node:path';
import { loadConfig, type Config } from '../../config.ts';
import { ABLATIONS, type Ablation } from '../../eval/ablations.ts';
import { MAX_BEST_OF, type BestOfNPlan } from '../../eval/best-of-n.ts';
import { parseRewardWeights, rewardWeightsFromEnv } from '../../eval/group-reward.ts';
import { modelFidelity } from '../../eval/fidelity.ts';
import { LlmConversationJudge } from '../../eval/judge.ts';
import type { LlmEndpoint } from '../../eval/llm-json.ts';
import { knownPolicyNames } from '../../eval/policies.ts';
import { writeReport } from '../../eval/report.ts';
import { runEvaluation, type UserFactory } from '../../eval/runner.ts';
import { createLogger } from '../../log.ts';
import { loadPacks, PERSONAS_DIR } from '../../persona/loader.ts';
import { RewardModels } from '../../reward/best-of-n.ts';
import { rewardModelFiles } from '../../reward/serve.ts';
import { createGenerator } from '../../runtime.ts';
import { LlmUser } from '../../sim/llm-user.ts';
import { DEFAULT_MAX_ROUNDS } from '../../sim/run.ts';
import { loadProfiles, loadSuite, PROFILES_FILE, splitOf, type Suite } from '../../sim/scenario.ts';
import { numberFlag, stringFlag, UsageError, type Command, type CommandContext } from '../command.ts';

const DEFAULT_POLICIES = 'random,round-robin,heuristic';

const usage = `Usage: mascot eval [options]

Runs every scenario of the suites with every policy under the same seeds (paired comparisons) and
writes a report folder; prints the tables at the end. Offline runs are reproducible bit for bit.

  --suite S          support, meeting, or a suite file (YAML or JSONL); a comma list (default: support,meeting)
  --policies P       comma list of ${knownPolicyNames().join(', ')} (default: ${DEFAULT_POLICIES})
  --seeds N          seeds per scenario (default 3): seeds B..B+N-1
  --seed B           first seed (default MASCOT_SEED)
  --out DIR          report folder (default reports/eval)
  --ablations A      ${ABLATIONS.join(',')} or none (default: both)
  --ablation-base P  the policy the ablations modify (default: the last of --policies)
  --user U           offline (the latent-state simulator) or llm (MASCOT_LLM_BASE_URL, MASCOT_SIM_USER_MODEL or MASCOT_LLM_MODEL)
  --judge J          none or llm: the paper's rubric (MASCOT_JUDGE_BASE_URL / MASCOT_JUDGE_MODEL, default MASCOT_LLM_*)
  --voice V          offline (default: the built-in offline voice) or llm (the configured model endpoint)
  --max-rounds N     rounds per conversation at most (default ${DEFAULT_MAX_ROUNDS})
  --limit N          only the first N scenarios of each split (quick runs)
  --profiles FILE    user profiles (default scenarios/profiles.yaml)
  --weights W        group reward weights, e.g. engagement=0.5,overTalk=0.2 (default MASCOT_REWARD_WEIGHTS)
  --best-of N        also run each policy as "P (best-of-N)": speakers ask for N candidates and post the one the
                     persona reward model ranks highest, as MASCOT_BEST_OF_N does (no latency budget); a comma
                     list gives several N (2-${MAX_BEST_OF}); the report adds paired differences against N=1
  --best-of-policies P  only these of --policies get best-of variants (default: all)
  --fidelity F       model (the persona reward models of MASCOT_REWARD_MODELS, default the shipped ones) or
                     check (the role/strategy check); default model where a pack has one
  --concurrency N    conversations at once (default 1 offline, MASCOT_LLM_CONCURRENCY with a model)
  --quiet            no progress lines`;

function list(ctx: CommandContext, name: string, fallback: string): string[] {
  return (stringFlag(ctx.flags, name) ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function choice<T extends string>(ctx: CommandContext, name: string, options: readonly T[], fallback: T): T {
  const v = stringFlag(ctx.flags, name) ?? fallback;
  if (!options.includes(v as T)) throw new UsageError(`--${name}: "${v}" is not one of ${options.join(', ')}`);
  return v as T;
}

/** The first `limit` scenarios of each split. */
function firstPerSplit(suite: Suite, limit: number): Suite {
  const seen = new Map<string, number>();
  return {
    ...suite,
    scenarios: suite.scenarios.filter((s) => {
      const n = (seen.get(splitOf(s)) ?? 0) + 1;
      seen.set(splitOf(s), n);
      return n <= limit;
    }),
  };
}

function endpointFor(config: Config, role: 'user' | 'judge'): LlmEndpoint {
  const baseURL = role === 'judge' ? (config.MASCOT_JUDGE_BASE_URL ?? config.MASCOT_LLM_BASE_URL) : config.MASCOT_LLM_BASE_URL;
  const model = role === 'judge' ? (config.MASCOT_JUDGE_MODEL ?? config.MASCOT_LLM_MODEL) : (config.MASCOT_SIM_USER_MODEL ?? config.MASCOT_LLM_MODEL);
  const needs = role === 'judge' ? 'MASCOT_JUDGE_BASE_URL (or MASCOT_LLM_BASE_URL) and MASCOT_JUDGE_MODEL (or MASCOT_LLM_MODEL)' : 'MASCOT_LLM_BASE_URL and MASCOT_SIM_USER_MODEL (or MASCOT_LLM_MODEL)';
  if (!baseURL || !model) throw new UsageError(`--${role} llm needs ${needs}`);
  return {
    baseURL,
    apiKey: role === 'judge' ? (config.MASCOT_JUDGE_API_KEY ?? config.MASCOT_LLM_API_KEY) : config.MASCOT_LLM_API_KEY,
    model,
    timeoutMs: config.MASCOT_LLM_TIMEOUT_MS,
    retries: config.MASCOT_LLM_RETRIES,
    maxTokens: role === 'judge' ? config.MASCOT_JUDGE_MAX_TOKENS : 400,
  };
}

export async function runEval(ctx: CommandContext): Promise<number> {
  const config = loadConfig(ctx.env);
  const policies = list(ctx, 'policies', DEFAULT_POLICIES);
  const ablationNames = list(ctx, 'ablations', ABLATIONS.join(','));
  const ablations = ablationNames.includes('none') ? [] : ablationNames;
  for (const a of ablations) if (!ABLATIONS.includes(a as Ablation)) throw new UsageError(`--ablations: "${a}" is not one of ${ABLATIONS.join(', ')}, none`);
  const seedCount = numberFlag(ctx.flags, 'seeds', 3, (n) => Number.isInteger(n) && n >= 1 && n <= 1000);
  const firstSeed = numberFlag(ctx.flags, 'seed', config.MASCOT_SEED, (n) => Number.isInteger(n) && n >= 0 && n < 2 ** 31);
  const maxRounds = numberFlag(ctx.flags, 'max-rounds', DEFAULT_MAX_ROUNDS, (n) => Number.isInteger(n) && n >= 1 && n <= 100);
  const limit = numberFlag(ctx.flags, 'limit', Infinity, (n) => Number.isInteger(n) && n >= 1);
  const userKind = choice(ctx, 'user', ['offline', 'llm'] as const, 'offline');
  const judgeKind = choice(ctx, 'judge', ['none', 'llm'] as const, 'none');
  const voiceKind = choice(ctx, 'voice', ['offline', 'llm'] as const, 'offline');
  const fidelityKind = choice(ctx, 'fidelity', ['model', 'check'] as const, 'model');
  const usesModel = userKind === 'llm' || judgeKind === 'llm' || voiceKind === 'llm' || policies.includes('llm');
  const concurrency = numberFlag(ctx.flags, 'concurrency', usesModel ? config.MASCOT_LLM_CONCURRENCY : 1, (n) => Number.isInteger(n) && n >= 1 && n <= 256);
  const weightsFlag = stringFlag(ctx.flags, 'weights');
  const weights = weightsFlag ? parseRewardWeights(weightsFlag, '--weights') : rewardWeightsFromEnv(ctx.env);
  const out = path.resolve(stringFlag(ctx.flags, 'out') ?? path.join('reports', 'eval'));
  const ablationBase = stringFlag(ctx.flags, 'ablation-base');
  if (ablationBase && ablations.length === 0) throw new UsageError('--ablation-base needs at least one ablation');

  const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
  const suites = list(ctx, 'suite', 'support,meeting').map((name) => firstPerSplit(loadSuite(name), limit));
  const profiles = loadProfiles(stringFlag(ctx.flags, 'profiles') ?? PROFILES_FILE);

  let user: UserFactory | undefined;
  if (userKind === 'llm') {
    const endpoint = endpointFor(config, 'user');
    user = (scenario, profile) => new LlmUser(scenario, profile, endpoint);
  }
  const judge = judgeKind === 'llm' ? new LlmConversationJudge(endpointFor(config, 'judge')) : undefined;
  let generator;
  if (voiceKind === 'llm') {
    if (!config.MASCOT_LLM_BASE_URL) throw new UsageError('--voice llm needs MASCOT_LLM_BASE_URL');
    const shared = createGenerator(config, createLogger(config.MASCOT_LOG_LEVEL));
    generator = () => shared;
  }

  const bestOfSizes = list(ctx, 'best-of', '').map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 2 || n > MAX_BEST_OF) throw new UsageError(`--best-of: "${v}" is not a whole number from 2 to ${MAX_BEST_OF} (N=1 is the policy itself)`);
    return n;
  });
  const bestOfPolicies = list(ctx, 'best-of-policies', policies.join(','));
  if (bestOfSizes.length === 0 && ctx.flags['best-of-policies'] !== undefined) throw new UsageError('--best-of-policies needs --best-of');
  for (const p of bestOfPolicies) if (!policies.includes(p)) throw new UsageError(`--best-of-policies: "${p}" is not one of --policies (${policies.join(', ')})`);

  const modelFiles = rewardModelFiles(config);
  if (bestOfSizes.length > 0 && modelFiles.length === 0) throw new UsageError('--best-of needs persona reward models to rank candidates (MASCOT_REWARD_MODELS is off)');
  const models = modelFiles.length > 0 && (fidelityKind === 'model' || bestOfSizes.length > 0) ? new RewardModels(modelFiles) : undefined;
  const fidelity = fidelityKind === 'model' && models ? modelFidelity(models) : undefined;
  if (fidelityKind === 'model' && !fidelity) ctx.stderr.write('mascot eval: no persona reward model configured (MASCOT_REWARD_MODELS); fidelity uses the role/strategy check\n');
  let bestOf: BestOfNPlan | undefined;
  if (models && bestOfSizes.length > 0) {
    for (const suite of suites)
      if (!models.packs.includes(suite.pack)) throw new UsageError(`--best-of: no persona reward model for pack "${suite.pack}" of suite "${suite.name}" (models for: ${models.packs.join(', ')}; see MASCOT_REWARD_MODELS)`);
    bestOf = { sizes: bestOfSizes, policies: bestOfPolicies, ranker: () => models.ranker(), rankerName: `the persona reward model${models.packs.length > 1 ? 's' : ''} (${models.packs.join(', ')})` };
  }

  const progress = ctx.flags.quiet !== true;
  const tty = (ctx.stderr as NodeJS.WritableStream & { isTTY?: boolean }).isTTY === true;
  let lastShown = -1;
  const started = Date.now();
  const results = await runEvaluation({
    fidelity: fidelity ? (pack) => fidelity.scorerFor(pack) : undefined,
    fidelityName: fidelity
      ? `the persona reward model${fidelity.packs.length > 1 ? 's' : ''} (${fidelity.packs.join(', ')}; other packs: the role/strategy check)`
      : 'the role/strategy check',
    bestOf,
    suites,
    packs,
    policies,
    ablations: ablations as Ablation[],
    ablationBase,
    seeds: Array.from({ length: seedCount }, (_, i) => firstSeed + i),
    profiles,
    maxRounds,
    weights,
    config,
    user,
    userName: userKind === 'llm' ? `llm (${endpointFor(config, 'user').model})` : 'offline (latent-state simulator)',
    judge,
    generator,
    voiceName: generator ? `the model endpoint (${config.MASCOT_LLM_MODEL ?? 'its first model'} at MASCOT_LLM_BASE_URL)` : undefined,
    concurrency,
    onProgress: ({ done, total, system, scenario, seed }) => {
      if (!progress) return;
      const pct = Math.floor((100 * done) / total);
      if (tty) ctx.stderr.write(`\r[eval] ${done}/${total} (${pct}%) ${system} ${scenario} seed ${seed}\u001b[K${done === total ? '\n' : ''}`);
      else if (pct >= lastShown + 10 || done === total) {
        lastShown = pct;
        ctx.stderr.write(`[eval] ${done}/${total} conversations (${pct}%)\n`);
      }
    },
  }).finally(() => models?.close());
  const { markdown, files } = writeReport(out, results);
  const failed = results.conversations.filter((c) => c.errors.length > 0);
  ctx.stdout.write(`${markdown}\n`);
  ctx.stdout.write(`Report: ${files.length} files in ${out} (report.md, results.json, conversations.jsonl, charts/), ${results.conversations.length} conversations in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
  if (failed.length > 0) ctx.stderr.write(`mascot eval: ${failed.length} conversation(s) hit an error; first: ${failed[0]!.errors[0]}\n`);
  return 0;
}

const evalCommand: Command = {
  name: 'eval',
  summary: 'compare director policies on simulated conversations and write a report',
  usage,
  run: runEval,
};

export default evalCommand;
