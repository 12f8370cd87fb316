// Persona health: every posted persona turn is scored by the persona reward model, and per channel
// we keep a rolling window of the last WINDOW scored turns:
//   fidelity of persona p   mean calibrated fidelity of p's turns in the window (0..1)
//   identification          share of turns whose highest-reward persona is their author
//   distinctness            (mean P(author | turn) - 1/P) / (1 - 1/P): 1 when every turn is clearly its
//                           author's, 0 when the model cannot tell the personas apart (chance)
// Persona collapse (all companions sounding alike) is signalled when distinctness falls below the
// collapse threshold; a persona whose rolling fidelity falls below the fidelity threshold is flagged.
// Each crossing raises one alert (an 'alert' event; adapters post it to the moderators' channel)
// and is stored, so a restart neither repeats nor forgets it; recovery past threshold + HYSTERESIS
// clears it (and says so).
import { EventEmitter } from 'node:events';
import type { Turn } from '../core/types.ts';
import type { Logger } from '../log.ts';
import type { Pack } from '../persona/schema.ts';
import type { Engine } from '../session/engine.ts';
import type { PersonaRewardModel } from './model.ts';
import { contextFromTranscript } from './rubric.ts';
import type { AlertRow, FidelityStore } from './store.ts';

export const HEALTH_DEFAULTS = {
  /** Scored turns per channel the rolling figures cover. */
  window: 20,
  /** Turns needed in the window before a signal can fire. */
  minTurns: 8,
  collapseThreshold: 0.3,
  fidelityThreshold: 0.35,
};
export type HealthOptions = typeof HEALTH_DEFAULTS;

const HYSTERESIS = 0.1;

export interface PersonaHealth {
  personaId: string;
  turns: number;
  /** Mean fidelity of its turns in the window; null without turns. */
  fidelity: number | null;
  /** Share of its turns identified as its own. */
  identified: number | null;
}

export interface ChannelHealth {
  channelKey: string;
  pack: string | null;
  modelVersion: string | null;
  turns: number;
  personas: PersonaHealth[];
  distinctness: number | null;
  identification: number | null;
  collapse: boolean;
  lowFidelity: string[];
}

export interface HealthAlert {
  channelKey: string;
  kind: AlertRow['kind'];
  personaId?: string;
  value: number;
  threshold: number;
  state: AlertRow['state'];
  /** A line for moderators. */
  text: string;
}

export interface HealthMonitorEvents {
  alert: [HealthAlert];
}

/** Finds the reward model for a pack (undefined: none loaded, health is off for that pack). */
export type RewardModelLookup = (pack: string) => Promise<PersonaRewardModel | undefined>;

export class HealthMonitor extends EventEmitter<HealthMonitorEvents> {
  readonly options: HealthOptions;
  private stopped = false;

  constructor(
    private readonly store: FidelityStore,
    private readonly models: RewardModelLookup,
    options: Partial<HealthOptions> = {},
    private readonly log?: Logger,
  ) {
    super();
    this.options = { ...HEALTH_DEFAULTS, ...options };
  }

  /** Score one posted persona turn (context = the transcript before it) and check the thresholds. */
  async observe(channelKey: string, pack: Pack, turn: Turn, before: readonly Turn[]): Promise<void> {
    const personaId = turn.author.personaId;
    if (!personaId) return;
    const model = await this.models(pack.id);
    if (!model || !model.hasPersona(personaId)) return;
    const [scores] = await model.scoreTurns([{ context: contextFromTranscript(before.slice(-8)), text: turn.text }]);
    if (this.stopped) return;
    const head = model.head(personaId);
    let best = 0;
    scores!.personaProb.forEach((p, i) => (p > scores!.personaProb[best]! ? (best = i) : undefined));
    this.store.recordFidelity({
      channelKey,
      messageId: turn.messageId,
      pack: pack.id,
      personaId,
      fidelity: scores!.fidelity[head]!,
      authorProb: scores!.personaProb[head]!,
      identified: model.info.personas[best]!,
      modelVersion: model.info.version,
      at: turn.at,
    });
    this.check(channelKey, model.info.personas.length);
  }

  /** Rolling figures of a channel from the stored scores. */
  snapshot(channelKey: string, personaCount?: number): ChannelHealth {
    const rows = this.store.recentFidelity(channelKey, this.options.window);
    const latest = rows.at(-1);
    const pack = latest?.pack ?? null;
    const current = rows.filter((r) => r.pack === pack && r.modelVersion === latest?.modelVersion);
    const ids = [...new Set(current.map((r) => r.personaId))].sort();
    const personas = ids.map((id): PersonaHealth => {
      const mine = current.filter((r) => r.personaId === id);
      return { personaId: id, turns: mine.length, fidelity: mean(mine.map((r) => r.fidelity)), identified: mean(mine.map((r) => (r.identified === id ? 1 : 0))) };
    });
    const P = personaCount ?? Math.max(ids.length, 2);
    const meanProb = mean(current.map((r) => r.authorProb));
    const distinctness = meanProb === null ? null : (meanProb - 1 / P) / (1 - 1 / P);
    const enough = current.length >= this.options.minTurns;
    return {
      channelKey,
      pack,
      modelVersion: latest?.modelVersion ?? null,
      turns: current.length,
      personas,
      distinctness,
      identification: mean(current.map((r) => (r.identified === r.personaId ? 1 : 0))),
      collapse: enough && ids.length >= 2 && distinctness !== null && distinctness < this.options.collapseThreshold,
      lowFidelity: enough ? personas.filter((p) => p.turns >= 3 && p.fidelity !== null && p.fidelity < this.options.fidelityThreshold).map((p) => p.personaId) : [],
    };
  }

  private check(channelKey: string, personaCount: number): void {
    const h = this.snapshot(channelKey, personaCount);
    if (h.turns < this.options.minTurns) return;
    if (h.distinctness !== null) this.transition(channelKey, 'collapse', undefined, h.distinctness, this.options.collapseThreshold, h);
    for (const p of h.personas) if (p.fidelity !== null && p.turns >= 3) this.transition(channelKey, 'low-fidelity', p.personaId, p.fidelity, this.options.fidelityThreshold, h);
  }

  private transition(channelKey: string, kind: AlertRow['kind'], personaId: string | undefined, value: number, threshold: number, h: ChannelHealth): void {
    const raised = this.store.lastAlert(channelKey, kind, personaId)?.state === 'raised';
    let state: AlertRow['state'] | undefined;
    if (!raised && value < threshold) state = 'raised';
    else if (raised && value >= threshold + HYSTERESIS) state = 'cleared';
    if (!state) return;
    const at = Date.now();
    this.store.recordAlert({ channelKey, kind, ...(personaId ? { personaId } : {}), value, threshold, state, at });
    const alert: HealthAlert = { channelKey, kind, ...(personaId ? { personaId } : {}), value, threshold, state, text: alertText(kind, state, personaId, value, threshold, h) };
    this.log?.warn({ channel: channelKey, kind, persona: personaId, value, threshold, state }, 'persona health alert');
    this.emit('alert', alert);
  }

  /** Score every persona turn the engine posts (scoring never delays or breaks the round). */
  attach(engine: Engine): void {
    monitors.set(engine, this);
    this.on('alert', (a) => engine.emit('alert', { channelKey: a.channelKey, kind: a.kind, text: a.text }));
    engine.on('turn', (channelKey, turn) => {
      const session = engine.session(channelKey);
      const i = session.transcript.findIndex((t) => t.messageId === turn.messageId);
      const before = i >= 0 ? session.transcript.slice(0, i) : session.transcript.filter((t) => t !== turn);
      const pack = engine.packs.get(engine.channelConfig(channelKey).pack);
      if (!pack || this.stopped) return;
      this.observe(channelKey, pack, turn, before).catch((err: unknown) => {
        if (!this.stopped) this.log?.warn({ channel: channelKey, err: (err as Error).message }, 'persona health scoring failed');
      });
    });
  }

  /** Shutdown: scoring still in flight is dropped quietly (the database and model are closing). */
  stop(): void {
    this.stopped = true;
  }
}

const monitors = new WeakMap<Engine, HealthMonitor>();

/** The health monitor attached to an engine, if any (for `/mascot health`). */
export function healthMonitorOf(engine: Engine): HealthMonitor | undefined {
  return monitors.get(engine);
}

function alertText(kind: AlertRow['kind'], state: AlertRow['state'], personaId: string | undefined, value: number, threshold: number, h: ChannelHealth): string {
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  if (kind === 'collapse')
    return state === 'raised'
      ? `Persona collapse in ${h.channelKey}: the companions have become hard to tell apart (distinctness ${pct(value)}, alert below ${pct(threshold)}, over the last ${h.turns} turns). Check recent style overrides or the model endpoint.`
      : `Persona collapse cleared in ${h.channelKey}: distinctness is back to ${pct(value)}.`;
  return state === 'raised'
    ? `Low persona fidelity in ${h.channelKey}: ${personaId}'s recent turns do not sound like it doing its job (fidelity ${pct(value)}, alert below ${pct(threshold)}).`
    : `Persona fidelity of ${personaId} in ${h.channelKey} recovered (${pct(value)}).`;
}

/** The health of a channel in a few lines, for `/mascot health`. */
export function formatHealth(h: ChannelHealth, threshold = HEALTH_DEFAULTS.collapseThreshold): string {
  if (h.turns === 0) return 'No persona turns have been scored here yet.';
  const pct = (x: number | null) => (x === null ? 'n/a' : `${Math.round(x * 100)}%`);
  const lines = [
    `Persona health over the last ${h.turns} scored turns (pack ${h.pack}, reward model ${h.modelVersion}):`,
    `Distinctness ${pct(h.distinctness)}${h.collapse ? ` (below ${pct(threshold)}: PERSONA COLLAPSE, the companions sound alike)` : ''}; identified correctly ${pct(h.identification)}.`,
    ...h.personas.map((p) => `- ${p.personaId}: fidelity ${pct(p.fidelity)} over ${p.turns} turns, recognised as itself ${pct(p.identified)}${h.lowFidelity.includes(p.personaId) ? ' (LOW)' : ''}`),
  ];
  return lines.join('\n');
}

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}
