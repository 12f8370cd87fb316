// A speaker turns a directive into a cleaned turn: prompt, generate (abortable), clean.
// With a ranker and n > 1 it asks for several candidates and keeps the best (best-of-N).
import type { Directive, Turn } from '../core/types.ts';
import type { Pack, Persona } from '../persona/schema.ts';
import { cleanOutput } from './clean.ts';
import type { Generator } from './generator.ts';
import { buildPrompt } from './prompt.ts';
import { turnGuard } from '../safety/injection.ts';

export interface SpeakRequest {
  pack: Pack;
  persona: Persona;
  /** Every active persona (the speaker included). */
  personas: Persona[];
  directive: Directive;
  transcript: Turn[];
  sessionKey: string;
  signal?: AbortSignal;
}

export interface Spoken {
  /** Cleaned text; empty when the model produced nothing usable. */
  text: string;
  offline: boolean;
}

/** Scores candidate turns for a persona (higher is better), e.g. the persona reward model. */
export type Ranker = (persona: Persona, transcript: Turn[], candidates: string[]) => Promise<number[]> | number[];

export interface SpeakerOptions {
  /** Longest turn we post; the platform adapter may split below this. */
  maxLength?: number;
  /** Candidates per turn when a ranker is set (best-of-N). */
  candidates?: number;
  ranker?: Ranker;
}

export class Speaker {
  constructor(
    readonly generator: Generator,
    private readonly options: SpeakerOptions = {},
  ) {}

  async speak(req: SpeakRequest): Promise<Spoken> {
    const n = this.options.ranker ? Math.max(1, this.options.candidates ?? 1) : 1;
    const { texts, offline } = await this.draft(req, n);
    if (texts.length === 0) return { text: '', offline };
    if (texts.length === 1 || !this.options.ranker) return { text: texts[0]!, offline };
    const scores = await this.options.ranker(req.persona, req.transcript, texts);
    let best = 0;
    for (let i = 1; i < texts.length; i++) if ((scores[i] ?? -Infinity) > (scores[best] ?? -Infinity)) best = i;
    return { text: texts[best]!, offline };
  }

  /** Up to `n` cleaned candidate turns (empty ones dropped), as the persona would write them now. */
  async draft(req: SpeakRequest, n: number): Promise<{ texts: string[]; offline: boolean }> {
    const { persona, personas, directive, transcript } = req;
    const others = personas.filter((p) => p.id !== persona.id);
    const lastHuman = [...transcript].reverse().find((t) => !t.author.isBot);
    // Rename, reveal, override and speak-as-another attempts are declined in character (src/safety/injection.ts).
    const guard = turnGuard(lastHuman?.text, persona, others, directive);
    const messages = buildPrompt({ pack: req.pack, persona, others, directive: guard.directive, transcript });
    const result = await this.generator.generate({
      personaId: persona.id,
      strategy: directive.strategy,
      messages,
      model: persona.generation.model,
      temperature: persona.generation.temperature,
      maxTokens: persona.generation.maxTokens,
      n,
      signal: req.signal,
      context: {
        sessionKey: req.sessionKey,
        humanName: lastHuman?.author.name ?? 'friend',
        lastHumanText: lastHuman?.text ?? '',
        recentBotTexts: transcript.filter((t) => t.author.isBot).slice(-4).map((t) => t.text),
      },
    });
    const names = [...others.map((p) => p.displayName), ...new Set(transcript.filter((t) => t.author.personaId !== persona.id).map((t) => t.author.name))];
    const texts = result.texts
      .map((t) => guard.screen(cleanOutput(t, { speaker: persona.displayName, others: names, maxLength: this.options.maxLength ?? 4000 }), { offline: result.offline, system: messages[0]!.content }))
      .filter((t) => t.length > 0);
    return { texts, offline: result.offline };
  }
}
