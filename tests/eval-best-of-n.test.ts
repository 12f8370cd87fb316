// Best-of-N in `mascot eval`: a "<policy> (best-of-N)" system's speakers ask for N candidates and
// post the one the persona reward model scores highest (checked here against the model file scored
// directly), paired with the same policy at N=1 under the same seeds, reproducibly, and reported
// as paired differences next to the independent role/strategy check.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { loadConfig } from '../src/config.ts';
import { compareBestOfN } from '../src/eval/best-of-n.ts';
import { modelFidelity } from '../src/eval/fidelity.ts';
import { DEFAULT_REWARD_WEIGHTS } from '../src/eval/group-reward.ts';
import { writeReport } from '../src/eval/report.ts';
import { runEvaluation, type ConversationResult, type EvalPlan, type EvalResults } from '../src/eval/runner.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { MODELS_DIR, RewardModels } from '../src/reward/best-of-n.ts';
import { PersonaRewardModel } from '../src/reward/model.ts';
import type { ContextTurn } from '../src/reward/rubric.ts';
import { loadProfiles, loadSuite } from '../src/sim/scenario.ts';
import type { GenerationRequest, GenerationResult, Generator } from '../src/speaker/generator.ts';
import { OfflineGenerator } from '../src/speaker/offline.ts';

const packs = loadPacks();
const profiles = loadProfiles();
const SUPPORT_MODEL = path.join(MODELS_DIR, 'persona-reward-support.onnx');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-best-of-n-'));

/** The offline voice, with every request it answered. */
class RecordingVoice implements Generator {
  readonly name = 'offline';
  constructor(
    private readonly inner: Generator,
    private readonly calls: { sessionKey: string; personaId: string; n: number; texts: string[] }[],
  ) {}

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const result = await this.inner.generate(request);
    this.calls.push({ sessionKey: request.context.sessionKey, personaId: request.personaId, n: request.n ?? 1, texts: result.texts.filter((t) => t.length > 0) });
    return result;
  }
}

/** Two support scenarios of every split, one seed, heuristic at N=1 and N=4. */
async function evaluate(calls: RecordingVoice['calls'] = []): Promise<EvalResults> {
  const suite = loadSuite('support');
  const models = new RewardModels([SUPPORT_MODEL]);
  const fidelity = modelFidelity(models);
  const plan: EvalPlan = {
    suites: [{ ...suite, scenarios: suite.splits.flatMap((split) => suite.scenarios.filter((s) => s.kind === 'support' && s.valence === split).slice(0, 2)) }],
    packs,
    policies: ['heuristic'],
    ablations: [],
    seeds: [1],
    profiles,
    weights: { ...DEFAULT_REWARD_WEIGHTS },
    config: loadConfig({}),
    maxRounds: 6,
    generator: (seed) => new RecordingVoice(new OfflineGenerator({ seed }), calls),
    fidelity: (pack) => fidelity.scorerFor(pack),
    fidelityName: 'the persona reward model (support)',
    bestOf: { sizes: [4], ranker: () => models.ranker(), rankerName: 'the persona reward model (support)' },
  };
  try {
    return await runEvaluation(plan);
  } finally {
    await models.close();
  }
}

/** The transcript before line `i` as the reward model reads it (the last eight turns). */
function contextBefore(c: ConversationResult, i: number): ContextTurn[] {
  return c.transcript.slice(Math.max(0, i - 8), i).map((t) => ({ name: t.name, text: t.text, isBot: t.personaId !== undefined, ...(t.personaId ? { personaId: t.personaId } : {}) }));
}

describe('best-of-N in evaluation', () => {
  const calls: RecordingVoice['calls'] = [];
  let results: EvalResults;
  let model: PersonaRewardModel;
  beforeAll(async () => {
    results = await evaluate(calls);
    model = await PersonaRewardModel.load(SUPPORT_MODEL);
  });
  afterAll(async () => {
    await model.release();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const system = (c: ConversationResult) => c.system;

  it('runs each policy at N=1 and N=4 on the same scenarios and seeds', () => {
    expect(results.systems).toEqual(['heuristic', 'heuristic (best-of-4)']);
    const plain = results.conversations.filter((c) => system(c) === 'heuristic');
    const best = results.conversations.filter((c) => system(c) === 'heuristic (best-of-4)');
    expect(best.map((c) => `${c.scenario}/${c.seed}/${c.profile}`)).toEqual(plain.map((c) => `${c.scenario}/${c.seed}/${c.profile}`));
    expect(results.meta.bestOf).toEqual({ sizes: [4], policies: ['heuristic'], ranker: 'the persona reward model (support)' });
    // Only the best-of system asks the voice for several candidates.
    expect(calls.some((c) => c.n === 4)).toBe(true);
    expect(calls.every((c) => c.n === 1 || c.n === 4)).toBe(true);
    expect(calls.filter((c) => c.n === 1).length).toBeGreaterThan(0);
  });

  it("posts, at every turn, the candidate with the highest reward under the turn's persona", async () => {
    let ranked = 0;
    let laterWon = 0;
    for (const c of results.conversations.filter((x) => system(x) === 'heuristic (best-of-4)')) {
      const sessionKey = `sim:${c.scenario}:${c.seed}`;
      const offered = calls.filter((x) => x.sessionKey === sessionKey && x.n === 4);
      for (let i = 0; i < c.transcript.length; i++) {
        const line = c.transcript[i]!;
        if (!line.personaId) continue;
        const call = offered.filter((x) => x.personaId === line.personaId && x.texts.includes(line.text));
        expect(call, `candidates of turn ${i} of ${sessionKey}`).toHaveLength(1);
        const candidates = call[0]!.texts;
        if (candidates.length < 2) continue;
        const context = contextBefore(c, i);
        const rewards = (await model.scoreTurns(candidates.map((text) => ({ context, text })))).map((s) => s.reward[model.head(line.personaId!)]!);
        const posted = rewards[candidates.indexOf(line.text)]!;
        expect(posted, `turn ${i} of ${sessionKey}: rewards ${rewards.map((r) => r.toFixed(3)).join(', ')}`).toBeCloseTo(Math.max(...rewards), 5);
        ranked++;
        if (candidates.indexOf(line.text) > 0) laterWon++;
      }
    }
    expect(ranked).toBeGreaterThan(10);
    // Not a vacuous check: later candidates often beat the first one N=1 would have posted.
    expect(laterWon).toBeGreaterThan(0);
    const stats = results.conversations.flatMap((c) => (c.bestOf ? [c.bestOf] : []));
    expect(stats.reduce((a, s) => a + s.ranked, 0)).toBe(ranked);
    expect(stats.reduce((a, s) => a + s.switched, 0)).toBe(laterWon);
  });

  it('starts from the very candidate N=1 posts, and its first turn scores at least as high', async () => {
    let compared = 0;
    for (const best of results.conversations.filter((x) => system(x) === 'heuristic (best-of-4)')) {
      const plain = results.conversations.find((x) => system(x) === 'heuristic' && x.scenario === best.scenario && x.seed === best.seed)!;
      const i = plain.transcript.findIndex((t) => t.personaId);
      const j = best.transcript.findIndex((t) => t.personaId);
      // Same person, same director stream: the first decision is the same.
      expect(j).toBe(i);
      expect(best.transcript[j]!.personaId).toBe(plain.transcript[i]!.personaId);
      const first = calls.find((x) => x.sessionKey === `sim:${best.scenario}:${best.seed}` && x.n === 4 && x.texts.includes(best.transcript[j]!.text))!;
      expect(first.texts[0]).toBe(plain.transcript[i]!.text);
      const context = contextBefore(best, j);
      const [ours, theirs] = await model.scoreTurns([best.transcript[j]!.text, plain.transcript[i]!.text].map((text) => ({ context, text })));
      const head = model.head(best.transcript[j]!.personaId!);
      expect(ours!.reward[head]!).toBeGreaterThanOrEqual(theirs!.reward[head]!);
      compared++;
    }
    expect(compared).toBe(6);
  });

  it('reports paired differences and the role/strategy check next to the model fidelity', () => {
    expect(results.metrics.map((m) => m.key).slice(0, 2)).toEqual(['fidelity', 'fidelityCheck']);
    for (const c of results.conversations) expect(c.metrics.fidelityCheck).toEqual(expect.any(Number));
    const all = compareBestOfN(results).find((r) => r.split === 'all')!;
    expect(all.pairs).toBe(6);
    const diffs = results.conversations
      .filter((c) => system(c) === 'heuristic (best-of-4)')
      .map((c) => c.metrics.fidelity! - results.conversations.find((x) => system(x) === 'heuristic' && x.scenario === c.scenario)!.metrics.fidelity!);
    expect(all.deltas.fidelity!.mean).toBeCloseTo(diffs.reduce((a, b) => a + b, 0) / diffs.length, 9);
    expect(all.switchedShare).toBeGreaterThan(0);
    expect(all.candidatesPerRanking).toBeGreaterThan(1);
    const { markdown } = writeReport(path.join(tmp, 'shape'), results);
    expect(markdown).toContain('## Best-of-N against N=1');
    expect(markdown).toMatch(/\| all \| heuristic \(best-of-4\) \| 6 \| [+-]\d+\.\d ± \d+\.\d \|/);
    expect(markdown).toContain('| Fidelity | Fidelity (check) |');
  });

  it('writes the same report bit for bit when run again', async () => {
    const a = writeReport(path.join(tmp, 'a'), results);
    const b = writeReport(path.join(tmp, 'b'), await evaluate());
    for (const file of ['report.md', 'results.json', 'conversations.jsonl']) expect(fs.readFileSync(path.join(tmp, 'b', file), 'utf8')).toBe(fs.readFileSync(path.join(tmp, 'a', file), 'utf8'));
    expect(b.files).toHaveLength(a.files.length);
  });
});

describe('mascot eval --best-of', () => {
  const io = (env: NodeJS.ProcessEnv = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: { write: (s: string) => out.push(s) } as unknown as NodeJS.WritableStream, stderr: { write: (s: string) => err.push(s) } as unknown as NodeJS.WritableStream, env } };
  };

  it('adds "P (best-of-N)" systems and the paired section from the command line', async () => {
    const { out, io: ctx } = io();
    const dir = path.join(os.tmpdir(), `mascot-best-of-cli-${process.pid}`);
    try {
      const args = ['eval', '--suite', 'meeting', '--policies', 'random,heuristic', '--best-of', '3', '--best-of-policies', 'heuristic', '--seeds', '1', '--limit', '1', '--ablations', 'none', '--max-rounds', '3', '--quiet', '--out', dir];
      expect(await main(args, ctx)).toBe(0);
      const text = out.join('');
      expect(text).toContain('| heuristic (best-of-3) |');
      expect(text).not.toContain('random (best-of-3)');
      expect(text).toContain('### meeting');
      expect(text).toContain('- Best-of-N: 3 candidates per turn for heuristic, ranked by the persona reward models');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a wrong N, policies not evaluated, and best-of-N without a reward model', async () => {
    const a = io();
    expect(await main(['eval', '--best-of', '1'], a.io)).toBe(2);
    expect(a.err.join('')).toContain('--best-of: "1" is not a whole number from 2 to 16');
    const b = io();
    expect(await main(['eval', '--policies', 'heuristic', '--best-of', '4', '--best-of-policies', 'random'], b.io)).toBe(2);
    expect(b.err.join('')).toContain('--best-of-policies: "random" is not one of --policies (heuristic)');
    const c = io({ MASCOT_REWARD_MODELS: 'off' });
    expect(await main(['eval', '--best-of', '4'], c.io)).toBe(2);
    expect(c.err.join('')).toContain('--best-of needs persona reward models');
    const d = io({ MASCOT_REWARD_MODELS: SUPPORT_MODEL });
    expect(await main(['eval', '--suite', 'meeting', '--best-of', '4'], d.io)).toBe(2);
    expect(d.err.join('')).toContain('--best-of: no persona reward model for pack "meeting"');
  });
});
