import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPacks } from '../src/persona/loader.ts';
import { runMascotCommand } from '../src/moderation/mascot.ts';
import { RewardModels } from '../src/reward/best-of-n.ts';
import { HealthMonitor } from '../src/reward/health.ts';
import '../src/reward/health-verb.ts';
import { FidelityStore } from '../src/reward/store.ts';
import type { ModeratorAlert } from '../src/session/engine.ts';
import type { GenerationRequest, Generator } from '../src/speaker/generator.ts';
import { humanEvent, makeEngine, RecordingOutlet, tempDir } from './support/core.ts';

/** Every persona answers with its own example for the asked strategy, or all with the same bland line. */
class VoiceGenerator implements Generator {
  readonly name = 'voices';
  collapsed = false;
  private n = 0;
  constructor(private readonly own: Map<string, { strategy: string; response: string }[]>) {}
  async generate(req: GenerationRequest) {
    this.n++;
    const examples = this.own.get(req.personaId)!;
    const mine = examples.filter((e) => e.strategy === req.strategy);
    const pool = mine.length > 0 ? mine : examples;
    const text = this.collapsed ? `Thank you for sharing that. I am here to help you with anything you need (${this.n}).` : pool[this.n % pool.length]!.response;
    return { texts: [text], offline: false, model: 'voices' };
  }
}

describe('persona health', () => {
  it('scores every persona turn, shows /mascot health, and alerts moderators once on collapse', async () => {
    const pack = loadPacks().get('support')!;
    const voices = new VoiceGenerator(new Map(pack.personas.map((p) => [p.id, p.examples])));
    const { engine, db } = makeEngine(voices, {}, path.join(tempDir('mascot-health-'), 'm.db'));

    const models = new RewardModels([path.resolve('models/persona-reward-support.onnx')]);
    const monitor = new HealthMonitor(new FidelityStore(db), models.forPack, { window: 12, minTurns: 6 });
    monitor.attach(engine);
    const alerts: ModeratorAlert[] = [];
    engine.on('alert', (a) => alerts.push(a));
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 10));
    };
    const outlet = new RecordingOutlet();
    const talk = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await engine.receive(humanEvent(`I feel so alone since I moved abroad, day ${i}.`, { channelId: 'health' }), outlet);
        await settle();
      }
    };

    await talk(6);
    const healthy = monitor.snapshot('console:health');
    expect(healthy.turns).toBeGreaterThanOrEqual(6);
    expect(healthy.collapse).toBe(false);
    expect(healthy.distinctness!).toBeGreaterThan(0.5);
    expect(alerts.filter((a) => a.kind === 'collapse')).toEqual([]);

    const ctx = { engine, platform: 'console' as const, channelId: 'health', user: { id: 'mod', name: 'Mod', isModerator: true } };
    const shown = await runMascotCommand(ctx, 'health');
    expect(shown.status).toBe('ok');
    expect(shown.text).toMatch(/Distinctness \d+%/);
    expect(shown.text).toContain('anchor: fidelity');
    const refused = await runMascotCommand({ ...ctx, user: { id: 'x', name: 'X', isModerator: false } }, 'health');
    expect(refused.status).toBe('refused');

    voices.collapsed = true;
    await talk(8);
    const collapsed = monitor.snapshot('console:health');
    expect(collapsed.collapse).toBe(true);
    const raised = alerts.filter((a) => a.kind === 'collapse');
    expect(raised).toHaveLength(1);
    expect(raised[0]!.text).toMatch(/Persona collapse in console:health/);
    expect((await runMascotCommand(ctx, 'health')).text).toContain('PERSONA COLLAPSE');

    // Still collapsed: no second alert. Recovered: one "cleared" alert.
    await talk(2);
    expect(alerts.filter((a) => a.kind === 'collapse')).toHaveLength(1);
    voices.collapsed = false;
    await talk(12);
    const collapseAlerts = alerts.filter((a) => a.kind === 'collapse');
    expect(collapseAlerts).toHaveLength(2);
    expect(collapseAlerts[1]!.text).toMatch(/cleared/);
    await models.close();
    db.close();
  });
});
