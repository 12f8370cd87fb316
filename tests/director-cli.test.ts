import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectorVersions } from '../src/director/versions.ts';
import { encodeDirector } from '../src/learn/director-model.ts';
import { DirectorFeaturizer } from '../src/learn/features.ts';
import { DirectorNetwork } from '../src/learn/network.ts';
import { saveModel } from '../src/learn/onnx.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { OfflineGenerator } from '../src/speaker/offline.ts';
import { openDatabase } from '../src/store/db.ts';
import { runMain } from './support/cli.ts';
import { humanEvent, makeEngine, RecordingOutlet, tempDir } from './support/core.ts';

const support = loadPacks().get('support')!;
const featurizer = new DirectorFeaturizer(support, 1 << 8);
const dir = tempDir('mascot-director-cli-');
const dbFile = path.join(dir, 'mascot.db');
const env = { ...process.env, MASCOT_DB: dbFile, MASCOT_DIRECTOR_DIR: path.join(dir, 'versions'), MASCOT_LOG_LEVEL: 'silent' };
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A director that prefers the given actions in order (biases only). */
function director(name: string, version: string, preferred: string[]): string {
  const net = new DirectorNetwork({ buckets: 1 << 8, emb: 2, dense: featurizer.denseNames.length, hidden: 4, actions: featurizer.slots.length });
  preferred.forEach((key, rank) => (net.b2.value[featurizer.slots.indexOf(key)] = 12 - 3 * rank));
  const file = path.join(dir, name);
  saveModel(file, encodeDirector(net, { pack: 'support', layout: featurizer.layout, shape: net.shape, policyVersion: version, training: { seeds: [101] } }));
  return file;
}

const suite = path.join(dir, 'tiny.yaml');
fs.writeFileSync(
  suite,
  `suite: tiny
kind: support
pack: support
description: One scenario.
scenarios:
  - id: exam-failed
    valence: negative
    situation: A student failed an important exam and feels ashamed.
    opening: I failed my exam today and I feel so stupid.
    need: To feel heard, then to plan the retake.
    needs: { explore: 0.8, insight: 0.5, action: 0.5 }
    shares: [I studied for weeks and still blanked., My parents are going to be so disappointed.]
    realisations: [Maybe one exam does not define me., I think the panic was the real problem.]
    steps: [book the retake date, ask my tutor about exam panic]
    whenRushed: I don't want a study plan right now, I just feel awful.
`,
);

const run = (...argv: string[]) => runMain(argv, env);

const silent = director('silent.onnx', 'support-silent', ['yield']);
const talker = director('talker.onnx', 'support-talker', ['anchor:reflection', 'catalyst:question', 'beacon:affirmation', 'yield']);

beforeAll(async () => {
  // Logged sessions: the heuristic directing the offline voice, with a rating on one round.
  const { engine, store, db } = makeEngine(new OfflineGenerator({ seed: 1 }), {}, dbFile);
  const outlet = new RecordingOutlet();
  for (const text of ['I failed my exam and I feel stupid.', 'My parents will be disappointed.', 'thanks, that helps', 'What should I do about the retake?', 'I think I can book it for June.'])
    await engine.receive(humanEvent(text), outlet);
  const round = db.prepare('SELECT round_id FROM decisions ORDER BY id LIMIT 1').pluck().get() as string;
  store.addFeedback({ channelKey: 'console:test', roundId: round, userId: 'u1', kind: 'rating', value: 5, at: Date.now() });
  db.close();
});

describe('mascot ope', () => {
  it('estimates a director on logged decisions and warns that a few decisions cannot decide', async () => {
    const r = await run('ope', '--policy', talker, '--baseline', 'heuristic', '--bootstrap', '100');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Off-policy evaluation of support-talker \(.*talker.onnx\) on \d+ logged decisions of pack support/);
    for (const label of ['logged value', 'IPS', 'SNIPS', 'DR ', 'effective sample size', 'DR difference (candidate - baseline)']) expect(r.out).toContain(label);
    expect(r.out).toMatch(/warning: effective sample size [\d.]+ is below 50/);
  });

  it('prints JSON and names a bad flag', async () => {
    const json = await run('ope', '--policy', 'heuristic', '--json', '--bootstrap', '20');
    const parsed = JSON.parse(json.out) as { n: number; candidate: { ess: number; maxWeight: number; ips: { estimate: number }; logged: { estimate: number } } };
    expect(parsed.n).toBeGreaterThan(3);
    // The heuristic logged these decisions: rebuilt from the log, its states give the logged
    // distributions back, so every weight is 1 and IPS is the logged value.
    expect(parsed.candidate.maxWeight).toBeCloseTo(1, 9);
    expect(parsed.candidate.ess).toBeCloseTo(parsed.n, 6);
    expect(parsed.candidate.ips.estimate).toBeCloseTo(parsed.candidate.logged.estimate, 9);
    const bad = await run('ope', '--policy', 'heuristic', '--since', 'yesterday-ish');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--since: "yesterday-ish" is not a date/);
  });
});

describe('mascot director', () => {
  it('refuses a worse director, records a forced one, promotes a better one, lists and rolls back', async () => {
    // Force the silent director in: the audit trail keeps the reason and the (negative) evidence.
    const forced = await run('director', 'promote', silent, '--evidence', 'simulation', '--suite', suite, '--seeds', '1-2', '--force', '--reason', 'trial');
    expect(forced.code).toBe(0);
    expect(forced.out).toMatch(/forced: support-silent is now active for pack support/);

    // The talker is promoted only by beating the active silent director in simulation.
    const promoted = await run('director', 'promote', talker, '--evidence', 'simulation', '--suite', suite, '--seeds', '1-2', '--actor', 'tester');
    expect(promoted.out).toMatch(/active    support-silent \(active, registered\)/);
    expect(promoted.out).toMatch(/simulation: 2 conversations, candidate [\d.]+ .* active [\d.]+/);
    expect(promoted.code).toBe(0);
    expect(promoted.out).toMatch(/promoted: support-talker is now active/);

    // Promoting the silent one back is refused on the evidence.
    const refused = await run('director', 'promote', silent, '--evidence', 'simulation', '--suite', suite, '--seeds', '1-2');
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/not promoted: the evidence does not show support-silent is better/);

    const db = openDatabase(dbFile);
    const history = new DirectorVersions(db, env.MASCOT_DIRECTOR_DIR).history('support');
    db.close();
    expect(history.map((h) => [h.action, h.version, h.actor])).toEqual([
      ['force', 'support-silent', expect.stringMatching(/^cli:/)],
      ['promote', 'support-talker', 'tester'],
    ]);
    expect(history[0]!.reason).toBe('trial');
    expect(history[1]!.evidence).toMatchObject({ source: 'simulation', seeds: [1, 2] });

    const list = await run('director', 'list', '--pack', 'support');
    expect(list.out).toMatch(/pack support: onnx serves support-talker \(promoted\)/);
    expect(list.out).toMatch(/\* support-talker/);

    const back = await run('director', 'rollback', '--pack', 'support');
    expect(back.out).toMatch(/rolled back pack support: support-talker -> support-silent/);
    const again = await run('director', 'rollback', '--pack', 'support');
    expect(again.out).toMatch(/support-silent -> the built-in director/);
    const none = await run('director', 'rollback', '--pack', 'support');
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/pack "support" has no promoted director to roll back/);
  });

  it('refuses a file for a pack that is not loaded or not a director', async () => {
    const notDirector = path.join(dir, 'notes.onnx');
    fs.writeFileSync(notDirector, 'not a model');
    const r = await run('director', 'promote', notDirector);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/notes.onnx: not an ONNX model/);
  });
});
