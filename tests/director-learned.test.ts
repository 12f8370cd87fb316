import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { attachLearnedDirectors, LearnedDirectors } from '../src/director/learned.ts';
import { builtinPolicies } from '../src/director/registry.ts';
import { DirectorVersions } from '../src/director/versions.ts';
import { encodeDirector } from '../src/learn/director-model.ts';
import { DirectorFeaturizer } from '../src/learn/features.ts';
import { stateFromLogged } from '../src/learn/logged.ts';
import { DirectorNetwork } from '../src/learn/network.ts';
import { saveModel } from '../src/learn/onnx.ts';
import { silentLogger } from '../src/log.ts';
import { loadPacks } from '../src/persona/loader.ts';
import type { GenerationRequest, GenerationResult, Generator } from '../src/speaker/generator.ts';
import { openDatabase } from '../src/store/db.ts';
import { createRng } from '../src/util/rng.ts';
import { humanEvent, makeEngine, RecordingOutlet, tempDir } from './support/core.ts';

const support = loadPacks().get('support')!;
const featurizer = new DirectorFeaturizer(support, 1 << 8);

/** A director that prefers the given actions in order (bias only), so rounds are predictable. */
function directorFile(file: string, version: string, preferred: string[]): string {
  const net = new DirectorNetwork({ buckets: 1 << 8, emb: 2, dense: featurizer.denseNames.length, hidden: 4, actions: featurizer.slots.length });
  preferred.forEach((key, rank) => (net.b2.value[featurizer.slots.indexOf(key)] = 12 - 3 * rank));
  saveModel(file, encodeDirector(net, { pack: 'support', layout: featurizer.layout, shape: net.shape, policyVersion: version, training: {} }));
  return file;
}

/** Answers at once, except the first request, which waits for `open()`. */
class GatedGenerator implements Generator {
  readonly name = 'gated';
  private release!: () => void;
  private readonly gate = new Promise<void>((r) => (this.release = r));
  private onStart!: () => void;
  readonly started = new Promise<void>((r) => (this.onStart = r));
  private calls = 0;
  async generate(req: GenerationRequest): Promise<GenerationResult> {
    if (this.calls++ === 0) {
      this.onStart();
      await this.gate;
    }
    return { texts: [`${req.personaId} (${req.strategy}) speaks.`], offline: false, model: 'gated' };
  }
  open(): void {
    this.release();
  }
}

let learned: LearnedDirectors | undefined;
afterEach(async () => {
  await learned?.stop();
  learned = undefined;
});

function setUp(generator: Generator) {
  const dir = tempDir('mascot-learned-');
  const models = path.join(dir, 'models');
  fs.mkdirSync(models);
  directorFile(path.join(models, 'support-director.onnx'), 'support-builtin', ['anchor:reflection', 'catalyst:question', 'yield']);
  const v2 = directorFile(path.join(dir, 'candidate.onnx'), 'support-v2', ['guide:suggestion', 'beacon:encouragement', 'yield']);
  const { engine, store, db } = makeEngine(generator);
  learned = new LearnedDirectors({ db, packs: engine.packs, policies: engine.policies, log: silentLogger(), versionsDir: path.join(dir, 'versions'), modelsDir: models, pollMs: 0, graceMs: 50 });
  store.setChannelSetting('console:test', 'policy', 'onnx', 'test');
  const versions = new DirectorVersions(db, path.join(dir, 'versions'));
  const decisions = () => db.prepare('SELECT policy_id AS id, policy_version AS version, chosen FROM decisions ORDER BY id').all() as { id: string; version: string; chosen: string }[];
  const reasons = () => db.prepare('SELECT reason FROM decisions ORDER BY id').pluck().all() as string[];
  return { engine, store, db, v2, versions, decisions, reasons, learned };
}

describe('learned director serving', () => {
  it('serves the built-in model, swaps to a promoted version mid-round without dropping a turn, and rolls back', async () => {
    const gen = new GatedGenerator();
    const { engine, v2, versions, decisions, learned } = setUp(gen);
    await learned.start();
    const outlet = new RecordingOutlet();

    // A round starts with the built-in model and is held in its first generation.
    const round = engine.receive(humanEvent('I failed my exam and I feel terrible about it.'), outlet);
    await gen.started;
    expect(decisions()).toEqual([{ id: 'onnx', version: 'support-builtin', chosen: 'anchor:reflection' }]);
    const { version } = versions.register(v2);
    versions.activate(version, 'force', 'test', 'hot swap test');
    expect(await learned.refresh()).toBe(true);
    gen.open();
    await round;
    // The round finished with the model it started with, every decided turn posted.
    const spoken = (ds: ReturnType<typeof decisions>) => ds.filter((d) => d.chosen !== 'yield').map((d) => d.chosen.split(':')[0]);
    expect(decisions().map((d) => d.version)).toEqual(['support-builtin', 'support-builtin']);
    expect(outlet.posts.map((p) => p.persona.id)).toEqual(spoken(decisions()));
    expect(outlet.posts).toHaveLength(2);

    // The next round uses the promoted version (it prefers guide and beacon).
    await engine.receive(humanEvent('Maybe I should plan the retake.'), outlet);
    const round2 = decisions().slice(2);
    expect(round2.map((d) => d.version)).toEqual(['support-v2', 'support-v2']);
    expect(outlet.posts.slice(2).map((p) => p.persona.id)).toEqual(spoken(round2));
    expect(spoken(round2)).toContain('guide');

    // A pinned version stays available by name.
    expect(engine.policies.has('onnx@support-v2')).toBe(true);

    versions.rollback('support', 'test', 'rollback test');
    expect(await learned.refresh()).toBe(true);
    await engine.receive(humanEvent('Thanks, I will think about it.'), outlet);
    expect(decisions().at(-1)!.version).toBe('support-builtin');
    // Nothing changed: no reload.
    expect(await learned.refresh()).toBe(false);
  });

  it('decides with the heuristic for a pack without a learned director, saying so', async () => {
    const gen = new GatedGenerator();
    gen.open();
    const { engine, store, decisions, reasons, learned } = setUp(gen);
    await learned.start();
    store.setChannelSetting('console:test', 'pack', 'meeting', 'test');
    await engine.receive(humanEvent('Should we ship the beta on Friday?'), new RecordingOutlet());
    expect(decisions()[0]!.id).toBe('heuristic');
    expect(reasons()[0]).toMatch(/no learned director for pack meeting/);
  });

  it('keeps serving the previous version when a promoted file was tampered with', async () => {
    const gen = new GatedGenerator();
    gen.open();
    const { engine, v2, versions, decisions, learned } = setUp(gen);
    await learned.start();
    const { version } = versions.register(v2);
    fs.appendFileSync(version.file, 'tampered');
    versions.activate(version, 'force', 'test', 'tamper test');
    await learned.refresh();
    await engine.receive(humanEvent('I failed my exam and I feel terrible about it.'), new RecordingOutlet());
    expect(decisions()[0]!.version).toBe('support-builtin');
  });
});

describe('attachLearnedDirectors', () => {
  it('registers onnx (the shipped support and meeting directors) and llm from configuration', async () => {
    const dir = tempDir('mascot-attach-');
    const db = openDatabase(path.join(dir, 'm.db'));
    const policies = builtinPolicies();
    const config = loadConfig({ MASCOT_LLM_BASE_URL: 'http://127.0.0.1:9/v1', MASCOT_DIRECTOR_LLM_MODEL: 'director-model', MASCOT_DIRECTOR_DIR: path.join(dir, 'versions'), MASCOT_DIRECTOR_POLL_MS: '0' });
    learned = attachLearnedDirectors(config, { db, packs: loadPacks(), policies, log: silentLogger() });
    expect([...policies.keys()]).toEqual(expect.arrayContaining(['heuristic', 'onnx', 'llm']));
    expect(policies.get('llm')!.version).toBe('director-model');
    const state = stateFromLogged(support, {
      human: 'I feel lost since the move.',
      transcript: [{ name: 'Sam', personaId: null, text: 'I feel lost since the move.' }],
      roundTurns: [],
      sessionStrategies: [],
      humanTurnCount: 1,
      personas: support.personas.map((p) => ({ id: p.id, talkativeness: p.talkativeness, strategies: p.strategies })),
      maxBotTurns: 2,
      floor: 0.005,
    });
    // The first decision waits for the models to load, then the shipped director decides.
    const d = await policies.get('onnx')!.decide(state, createRng(1));
    expect(d.policyId).toBe('onnx');
    expect(d.policyVersion).toBe('support-grpo-1');
    // The meeting pack's shipped director is served the same way.
    const meeting = loadPacks().get('meeting')!;
    const meetingState = stateFromLogged(meeting, {
      human: 'Can we decide on the launch date now and agree who owns what?',
      transcript: [{ name: 'Dana', personaId: null, text: 'Can we decide on the launch date now and agree who owns what?' }],
      roundTurns: [],
      sessionStrategies: [],
      humanTurnCount: 1,
      personas: meeting.personas.map((p) => ({ id: p.id, talkativeness: p.talkativeness, strategies: p.strategies })),
      maxBotTurns: 2,
      floor: 0.005,
    });
    const m = await policies.get('onnx')!.decide(meetingState, createRng(1));
    expect(m.policyId).toBe('onnx');
    expect(m.policyVersion).toBe('meeting-grpo-1');
    await learned.stop();
    learned = undefined;
    db.close();
  });
});
