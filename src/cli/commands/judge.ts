// `mascot judge`: write K candidate turns per persona for logged, simulated or example contexts,
// score them on the rubric with a judge, and store the scores and the pairs whose mean scores
// differ by at least the margin (src/reward/preferences.ts).
import fs from 'node:fs';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { loadPacks, PERSONAS_DIR } from '../../persona/loader.ts';
import { LlmJudge, type Judge } from '../../reward/judge.ts';
import { OfflineRubricJudge } from '../../reward/offline-rubric.ts';
import { DEFAULT_MIN_MARGIN, exampleContexts, judgeContexts, scenarioContexts, type CandidateContext } from '../../reward/preferences.ts';
import { FidelityStore } from '../../reward/store.ts';
import { createGenerator } from '../../runtime.ts';
import { resolveSuitePath } from '../../sim/scenario.ts';
import { Speaker } from '../../speaker/speaker.ts';
import { openDatabase } from '../../store/db.ts';
import { numberFlag, stringFlag, UsageError, type Command } from '../command.ts';

const SOURCES = ['logged', 'scenarios', 'examples'] as const;

const judgeCommand: Command = {
  name: 'judge',
  summary: 'score candidate persona turns on the rubric and store preference pairs for the reward model',
  usage: `Usage: mascot judge --pack P [options]

  --source S       contexts: logged,scenarios,examples (comma list; default all)
  --limit N        at most N logged contexts, newest (default 200)
  --suite NAME     scenario suite (default the pack's own)
  --k N            candidates per persona and context (default 4; the OpenAI-compatible n parameter)
  --min-margin X   keep pairs whose mean rubric scores differ by at least X (default ${DEFAULT_MIN_MARGIN})
  --judge llm|offline  llm: MASCOT_JUDGE_BASE_URL / MASCOT_JUDGE_MODEL (default: MASCOT_LLM_*);
                   offline: the offline rubric scorer (labelled "offline-rubric"); default llm when configured
  --no-cross       do not add one candidate of each other persona to a persona's judged set

Candidates come from the configured model (MASCOT_LLM_BASE_URL) or the offline voice. Scores and pairs
are stored in MASCOT_DB as they are judged; items that fail are listed and the rest is kept.`,
  async run(ctx) {
    const config = loadConfig(ctx.env);
    const log = createLogger(config.MASCOT_LOG_LEVEL);
    const packs = loadPacks(config.MASCOT_PERSONAS_DIR ?? PERSONAS_DIR);
    const packId = stringFlag(ctx.flags, 'pack');
    if (!packId) throw new UsageError('--pack is required');
    const pack = packs.get(packId);
    if (!pack) throw new UsageError(`--pack: "${packId}" is not a pack (available: ${[...packs.keys()].join(', ')})`);
    const sources = (stringFlag(ctx.flags, 'source') ?? SOURCES.join(',')).split(',').map((s) => s.trim());
    for (const s of sources) if (!(SOURCES as readonly string[]).includes(s)) throw new UsageError(`--source: "${s}" is not one of ${SOURCES.join(', ')}`);
    const k = numberFlag(ctx.flags, 'k', 4, (n) => Number.isInteger(n) && n >= 2 && n <= 16);
    const minMargin = numberFlag(ctx.flags, 'min-margin', DEFAULT_MIN_MARGIN, (n) => n >= 0 && n <= 4);
    const limit = numberFlag(ctx.flags, 'limit', 200, (n) => Number.isInteger(n) && n >= 1);

    const baseURL = config.MASCOT_JUDGE_BASE_URL ?? config.MASCOT_LLM_BASE_URL;
    const model = config.MASCOT_JUDGE_MODEL ?? config.MASCOT_LLM_MODEL;
    const kind = stringFlag(ctx.flags, 'judge') ?? (baseURL && model ? 'llm' : 'offline');
    let judge: Judge;
    if (kind === 'llm') {
      if (!baseURL || !model) throw new UsageError('--judge llm needs MASCOT_JUDGE_BASE_URL and MASCOT_JUDGE_MODEL (or MASCOT_LLM_BASE_URL and MASCOT_LLM_MODEL)');
      judge = new LlmJudge({ baseURL, apiKey: config.MASCOT_JUDGE_API_KEY ?? config.MASCOT_LLM_API_KEY, model, timeoutMs: config.MASCOT_LLM_TIMEOUT_MS, retries: config.MASCOT_LLM_RETRIES, maxTokens: config.MASCOT_JUDGE_MAX_TOKENS });
    } else if (kind === 'offline') {
      judge = new OfflineRubricJudge();
      ctx.stdout.write('judge: the offline rubric scorer (a documented heuristic, not a model); pairs are labelled "offline-rubric"\n');
    } else throw new UsageError('--judge must be llm or offline');

    const db = openDatabase(config.MASCOT_DB);
    try {
      const store = new FidelityStore(db);
      const contexts: CandidateContext[] = [];
      if (sources.includes('logged')) contexts.push(...store.loggedContexts(pack.id, limit));
      const suite = stringFlag(ctx.flags, 'suite') ?? (fs.existsSync(resolveSuitePath(pack.id)) ? pack.id : undefined);
      if (sources.includes('scenarios') && suite) contexts.push(...scenarioContexts(suite));
      if (sources.includes('examples')) contexts.push(...exampleContexts(pack));
      if (contexts.length === 0) throw new Error(`no contexts for pack ${pack.id} from ${sources.join(', ')}`);
      const speaker = new Speaker(createGenerator(config, log));
      const runId = `judge-${new Date().toISOString()}`;
      let done = 0;
      const result = await judgeContexts({
        pack,
        contexts,
        speaker,
        judge,
        k,
        minMargin,
        cross: ctx.flags['no-cross'] !== true,
        runId,
        onJudged: (set) => {
          store.saveJudgedSet(set, runId);
          done++;
          ctx.stderr.write(`\rjudged ${done}/${contexts.length * pack.personas.length}`);
        },
      });
      ctx.stderr.write('\n');
      const pairs = result.sets.reduce((n, s) => n + s.pairs.length, 0);
      const candidates = result.sets.reduce((n, s) => n + s.candidates.length, 0);
      ctx.stdout.write(`${contexts.length} contexts, ${candidates} candidates judged by ${judge.name}, ${pairs} pairs kept (margin ${minMargin}), stored in ${config.MASCOT_DB}\n`);
      for (const f of result.failures.slice(0, 10)) ctx.stdout.write(`failed: context ${f.contextKey}, ${f.personaId}: ${f.error}\n`);
      if (result.failures.length > 10) ctx.stdout.write(`... and ${result.failures.length - 10} more failures\n`);
      return result.sets.length === 0 ? 1 : 0;
    } finally {
      db.close();
    }
  },
};

export default judgeCommand;
