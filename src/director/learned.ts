// Serving the learned directors in a running process. Adds to the engine's policy map:
//   onnx            the active version of each pack (promoted in the registry, else the pack's
//                   built-in models/<pack>-director.onnx), hot-swapped when a promotion or rollback
//                   is recorded: the map entry is replaced atomically once the new model is loaded,
//                   so a round in progress finishes with the model it started with and no turn drops
//   onnx@<version>  one registered version, for a channel that wants to pin it
//   llm             the llm director, when a model endpoint is configured
// Turns the model cannot decide (another pack, a remote server down) fall back to the heuristic,
// with the reason in the decision and one warning per cause in the log.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.ts';
import type { Decision } from '../core/types.ts';
import { readDirectorInfo, type DirectorModelInfo } from '../learn/director-model.ts';
import { DirectorFeaturizer } from '../learn/features.ts';
import type { ExecutionProvider } from '../learn/onnx.ts';
import type { Logger } from '../log.ts';
import type { Pack } from '../persona/schema.ts';
import type { Db } from '../store/db.ts';
import type { Rng } from '../util/rng.ts';
import { HeuristicPolicy } from './heuristic.ts';
import { KServeInference, type KServeOptions } from './kserve.ts';
import { LlmPolicy } from './llm-policy.ts';
import { policyFromBytes, type OnnxPolicy } from './onnx-policy.ts';
import type { DirectorState, Policy } from './policy.ts';
import { DirectorVersions, type DirectorVersion } from './versions.ts';

export const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../models');

/** The built-in director file of a pack, shipped in models/. */
export const builtinModelFile = (pack: string, dir = MODELS_DIR) => path.join(dir, `${pack}-director.onnx`);

export interface LearnedDirectorsOptions {
  db: Db;
  packs: Map<string, Pack>;
  policies: Map<string, Policy>;
  log: Logger;
  versionsDir: string;
  modelsDir?: string;
  executionProvider?: ExecutionProvider;
  kserve?: KServeOptions;
  pollMs?: number;
  /** How long a replaced model stays open for rounds still using it. */
  graceMs?: number;
}

interface Source {
  bytes: Uint8Array;
  info: DirectorModelInfo;
  where: string;
}

/** The `onnx` policy: each pack's active model, the heuristic for packs without one. */
class ActiveDirector implements Policy {
  readonly id = 'onnx';
  readonly version: string;

  constructor(
    readonly byPack: ReadonlyMap<string, OnnxPolicy>,
    private readonly fallback: Policy,
    private readonly warn: (key: string, message: string) => void,
  ) {
    this.version = [...byPack.values()].map((p) => p.version).join('+') || 'none';
  }

  async decide(state: DirectorState, rng: Rng): Promise<Decision> {
    const policy = this.byPack.get(state.pack.id);
    if (policy) return policy.decide(state, rng);
    this.warn(`none:${state.pack.id}`, `no learned director for pack "${state.pack.id}"; the heuristic decides there`);
    const decision = await this.fallback.decide(state, rng);
    return { ...decision, reason: `${decision.reason} (no learned director for pack ${state.pack.id})` };
  }
}

/** `onnx@<version>`: one registered version, loaded on first use. */
class PinnedDirector implements Policy {
  readonly id = 'onnx';
  private loading: Promise<OnnxPolicy> | undefined;

  constructor(
    readonly version: string,
    private readonly load: () => Promise<OnnxPolicy>,
    private readonly fallback: Policy,
  ) {}

  async decide(state: DirectorState, rng: Rng): Promise<Decision> {
    this.loading ??= this.load();
    try {
      return await (await this.loading).decide(state, rng);
    } catch (err) {
      const decision = await this.fallback.decide(state, rng);
      return { ...decision, reason: `${decision.reason} (director ${this.version} unavailable: ${(err as Error).message})` };
    }
  }

  async close(): Promise<void> {
    if (this.loading) await (await this.loading.catch(() => undefined))?.close();
  }
}

export class LearnedDirectors {
  readonly versions: DirectorVersions;
  private readonly fallback: Policy;
  private readonly warned = new Set<string>();
  private loaded = new Map<string, OnnxPolicy>(); // key: pack/version
  private mark = -1;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<boolean> | undefined;
  private readonly pinned: PinnedDirector[] = [];

  constructor(private readonly o: LearnedDirectorsOptions) {
    this.versions = new DirectorVersions(o.db, o.versionsDir);
    this.fallback = o.policies.get('heuristic') ?? new HeuristicPolicy();
  }

  /** Install the policies, load the active models, and start watching for promotions. */
  start(): Promise<boolean> {
    for (const v of this.versions.list()) this.pin(v);
    // Until the first load completes, `onnx` waits for it rather than deciding without it.
    let first: Promise<boolean> | undefined;
    const placeholder: Policy = {
      id: 'onnx',
      version: 'loading',
      decide: async (state, rng) => {
        await first?.catch(() => false);
        const current = this.o.policies.get('onnx');
        return current && current !== placeholder ? current.decide(state, rng) : this.fallback.decide(state, rng);
      },
    };
    this.o.policies.set('onnx', placeholder);
    first = this.refresh();
    const poll = this.o.pollMs ?? 2000;
    if (poll > 0) {
      this.timer = setInterval(() => void this.refresh().catch((err: Error) => this.o.log.error({ err: err.message }, 'learned director refresh failed')), poll);
      this.timer.unref();
    }
    return first;
  }

  /** Reload when the registry changed since the last look. Returns whether the active set changed. */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.reload().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async reload(): Promise<boolean> {
    const mark = this.versions.changeMark();
    if (mark === this.mark) return false;
    const next = new Map<string, OnnxPolicy>();
    for (const pack of this.o.packs.values()) {
      let where = `pack ${pack.id}`;
      try {
        const source = this.activeSource(pack);
        if (!source) continue;
        where = source.where;
        next.set(pack.id, this.loaded.get(`${pack.id}/${source.info.policyVersion}`) ?? (await this.open(source, pack)));
      } catch (err) {
        // Keep what was serving before rather than dropping the pack to the heuristic.
        const previous = [...this.loaded.values()].find((p) => p.pack.id === pack.id);
        this.o.log.error({ pack: pack.id, model: where, err: (err as Error).message }, previous ? 'learned director could not be loaded; keeping the previous one' : 'learned director could not be loaded');
        if (previous) next.set(pack.id, previous);
      }
    }
    for (const v of this.versions.list()) if (!this.pinned.some((p) => p.version === v.version)) this.pin(v);

    const replaced = [...this.loaded.entries()].filter(([, p]) => ![...next.values()].includes(p));
    this.loaded = new Map([...next.values()].map((p) => [`${p.pack.id}/${p.version}`, p]));
    this.o.policies.set('onnx', new ActiveDirector(next, this.fallback, (k, m) => this.warnOnce(k, m)));
    this.mark = mark;
    if (replaced.length > 0) {
      const t = setTimeout(() => void Promise.all(replaced.map(([, p]) => p.close())), this.o.graceMs ?? 30_000);
      t.unref();
    }
    this.o.log.info({ active: Object.fromEntries([...next].map(([pack, p]) => [pack, p.version])) }, 'learned directors loaded');
    return true;
  }

  /** The active promoted version of a pack, else its built-in model, else none. */
  private activeSource(pack: Pack): Source | undefined {
    const active = this.versions.active(pack.id);
    if (active) {
      const bytes = this.versions.read(active);
      return { bytes, info: readDirectorInfo(bytes, active.file), where: active.file };
    }
    const builtin = builtinModelFile(pack.id, this.o.modelsDir);
    if (!fs.existsSync(builtin)) return undefined;
    const bytes = fs.readFileSync(builtin);
    return { bytes, info: readDirectorInfo(bytes, builtin), where: builtin };
  }

  private pin(v: DirectorVersion): void {
    const pack = this.o.packs.get(v.pack);
    if (!pack) return;
    const policy = new PinnedDirector(
      v.version,
      async () => {
        const bytes = this.versions.read(v);
        return this.open({ bytes, info: readDirectorInfo(bytes, v.file), where: v.file }, pack);
      },
      this.fallback,
    );
    this.pinned.push(policy);
    this.o.policies.set(`onnx@${v.version}`, policy);
  }

  private async open(source: Source, pack: Pack): Promise<OnnxPolicy> {
    const options = {
      executionProvider: this.o.executionProvider,
      warn: (m: string) => this.o.log.warn(m),
      fallback: this.fallback,
      onFallback: (why: string) => this.warnOnce(`${source.info.policyVersion}:${why.split(':')[0]}`, `director ${source.info.policyVersion}: ${why}; the heuristic decides those turns`),
    };
    if (this.o.kserve) {
      const remote = new KServeInference(this.o.kserve, source.info);
      try {
        const probe = new DirectorFeaturizer(pack, source.info.layout.buckets).extract(probeState(pack));
        await remote.verify(source.bytes, probe);
        return await policyFromBytes(source.bytes, source.info, source.where, pack, { ...options, remote: () => remote });
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message }, 'remote director inference unavailable; serving the same file in-process');
      }
    }
    return policyFromBytes(source.bytes, source.info, source.where, pack, options);
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.o.log.warn(message);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.refreshing?.catch(() => undefined);
    await Promise.all([...this.loaded.values()].map((p) => p.close()));
    await Promise.all(this.pinned.map((p) => p.close()));
  }
}

/** A fixed state to check a remote server computes what the local file computes. */
function probeState(pack: Pack): DirectorState {
  const human = { messageId: 'probe', author: { id: 'probe', name: 'Probe', isBot: false }, text: 'I feel stuck and tired. What should I do next?', at: 0 };
  return { pack, personas: pack.personas, transcript: [human], human, roundTurns: [], sessionStrategies: [], humanTurnCount: 1, mentions: [], maxBotTurns: pack.director.maxBotTurns, floor: pack.director.floor };
}

/** Add the learned and llm directors to a runtime's policy map, from configuration. */
export function attachLearnedDirectors(config: Config, o: Omit<LearnedDirectorsOptions, 'versionsDir' | 'executionProvider' | 'kserve' | 'pollMs'>): LearnedDirectors {
  const learned = new LearnedDirectors({
    ...o,
    versionsDir: config.MASCOT_DIRECTOR_DIR,
    executionProvider: config.MASCOT_ONNX_EP,
    pollMs: config.MASCOT_DIRECTOR_POLL_MS,
    ...(config.MASCOT_KSERVE_URL ? { kserve: { url: config.MASCOT_KSERVE_URL, model: config.MASCOT_KSERVE_MODEL, timeoutMs: config.MASCOT_KSERVE_TIMEOUT_MS } } : {}),
  });
  void learned.start().catch((err: Error) => o.log.error({ err: err.message }, 'learned directors failed to start'));
  const model = config.MASCOT_DIRECTOR_LLM_MODEL ?? config.MASCOT_LLM_MODEL;
  if (config.MASCOT_LLM_BASE_URL && model)
    o.policies.set(
      'llm',
      new LlmPolicy({ baseURL: config.MASCOT_LLM_BASE_URL, apiKey: config.MASCOT_LLM_API_KEY, model, timeoutMs: config.MASCOT_DIRECTOR_LLM_TIMEOUT_MS, fallback: o.policies.get('heuristic') ?? new HeuristicPolicy(), log: o.log }),
    );
  return learned;
}
