// Best-of-N at serve time: the speaker asks for N candidates and posts the one the persona reward
// model scores highest. Latency stays bounded by a budget: the first candidate is requested on its
// own, the other N-1 in a second request at the same time; when the first is back we wait for the
// others only until `budgetMs` after the start, then drop them (the request is aborted). So a slow
// best-of-N never makes a turn later than max(one candidate, budget). N = 1 turns it all off.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log.ts';
import type { Persona } from '../persona/schema.ts';
import type { GenerationRequest, GenerationResult, Generator } from '../speaker/generator.ts';
import type { Ranker } from '../speaker/speaker.ts';
import type { ExecutionProvider } from '../learn/onnx.ts';
import { PersonaRewardModel, readRewardInfo, type RewardModelInfo } from './model.ts';
import { contextFromTranscript } from './rubric.ts';

/** Shipped models: models/persona-reward-<pack>.onnx. */
export const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../models');

export function shippedRewardModels(dir = MODELS_DIR): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => /^persona-reward-.+\.onnx$/.test(f))
    .sort()
    .map((f) => path.join(dir, f));
}

/** The persona reward models of the running process, one per pack, loaded on first use. */
export class RewardModels {
  private readonly infos = new Map<string, { file: string; info: RewardModelInfo }>();
  private readonly loaded = new Map<string, Promise<PersonaRewardModel>>();

  /** Reads every file's metadata now, so a wrong file fails start-up with its name. */
  constructor(
    files: readonly string[],
    private readonly options: { executionProvider?: ExecutionProvider; log?: Logger } = {},
  ) {
    for (const file of files) {
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(file);
      } catch (err) {
        throw new Error(`MASCOT_REWARD_MODELS: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      }
      const info = readRewardInfo(bytes, file);
      if (this.infos.has(info.pack)) throw new Error(`MASCOT_REWARD_MODELS: two models for pack "${info.pack}" (${this.infos.get(info.pack)!.file} and ${file})`);
      this.infos.set(info.pack, { file, info });
    }
  }

  get packs(): string[] {
    return [...this.infos.keys()];
  }

  /** The model of a pack, or undefined when none is configured for it. */
  forPack = async (pack: string): Promise<PersonaRewardModel | undefined> => {
    const entry = this.infos.get(pack);
    if (!entry) return undefined;
    let model = this.loaded.get(pack);
    if (!model) {
      model = PersonaRewardModel.load(entry.file, { executionProvider: this.options.executionProvider, warn: (m) => this.options.log?.warn(m) });
      this.loaded.set(pack, model);
    }
    return model;
  };

  /** The pack of the model that has a head for this persona. */
  packOf(persona: Persona): string | undefined {
    for (const [pack, { info }] of this.infos) if (info.personas.includes(persona.id)) return pack;
    return undefined;
  }

  /** A Speaker ranker: reward of each candidate under its persona (0 for all when no model knows it). */
  ranker(): Ranker {
    return async (persona, transcript, candidates) => {
      const pack = this.packOf(persona);
      const model = pack ? await this.forPack(pack) : undefined;
      if (!model) return candidates.map(() => 0);
      const context = contextFromTranscript(transcript.slice(-8));
      const scores = await model.scoreTurns(candidates.map((text) => ({ context, text })));
      const head = model.head(persona.id);
      return scores.map((s) => s.reward[head]!);
    };
  }

  async close(): Promise<void> {
    for (const m of this.loaded.values()) await (await m).release();
    this.loaded.clear();
  }
}

/** Wrap a generator so an n-candidate request costs at most `budgetMs` beyond its first candidate. */
export class BudgetedGenerator implements Generator {
  readonly name: string;

  constructor(
    private readonly inner: Generator,
    private readonly budgetMs: number,
    private readonly log?: Logger,
  ) {
    this.name = inner.name;
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const n = request.n ?? 1;
    if (n <= 1) return this.inner.generate(request);
    const started = Date.now();
    const extraAbort = new AbortController();
    const onAbort = () => extraAbort.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', onAbort, { once: true });
    const first = this.inner.generate({ ...request, n: 1 });
    const extra = this.inner.generate({ ...request, n: n - 1, signal: extraAbort.signal });
    extra.catch(() => {}); // settled below or abandoned on purpose
    try {
      let primary: GenerationResult;
      try {
        primary = await first;
      } catch (err) {
        // The first request failed: the others are all we can have (or the error stands).
        if (request.signal?.aborted) throw err;
        return await extra.catch(() => Promise.reject(err));
      }
      const left = this.budgetMs - (Date.now() - started);
      let timer: NodeJS.Timeout | number | undefined;
      const more = await Promise.race([extra.catch(() => undefined), new Promise<undefined>((r) => (timer = setTimeout(r, Math.max(0, left))))]);
      clearTimeout(timer);
      if (!more) {
        extraAbort.abort(new Error('best-of-N budget spent'));
        this.log?.debug({ budgetMs: this.budgetMs }, 'best-of-N: extra candidates dropped after the latency budget');
        return primary;
      }
      return { ...primary, texts: [...primary.texts, ...more.texts] };
    } finally {
      request.signal?.removeEventListener('abort', onAbort);
    }
  }
}
