// Crisis detection as the gate uses it: the rules always run; the learned lexical classifier
// (lexical.ts) adds a crisis when its score reaches its threshold, unless the rules cancelled a
// match in that message for a reason that describes the whole message's frame (negation, fiction
// or news, information talk, hyperbole, the past, an accident, play): those veto it, because the
// classifier sees the crisis words but not what cancels them. The optional model-backed check
// runs last and can only turn `ok` into `crisis`, never the other way (a missed crisis costs more
// than a needless calm message). In 'watch' mode the model sees only messages with risk
// vocabulary or a cancelled pattern; in 'all' mode every message the rules and classifier passed.
import { CrisisRules, type RuleVerdict, type SuppressionReason } from './classifier.ts';
import type { CrisisCategory } from './language.ts';
import type { LexicalClassifier } from './lexical.ts';
import type { ModelSafetyCheck } from './model-check.ts';
import { normalizeText } from './normalize.ts';

export const MODEL_CHECK_MODES = ['off', 'watch', 'all'] as const;
export type ModelCheckMode = (typeof MODEL_CHECK_MODES)[number];

export interface CrisisVerdict {
  label: 'crisis' | 'ok';
  /** 'unspecified' when only the classifier or the model saw a crisis (they do not name a category). */
  category?: CrisisCategory | 'unspecified';
  source: 'rules' | 'lexical' | 'model';
  /** Ids of the patterns that counted (empty for a classifier or model verdict). */
  patterns: string[];
  rules: RuleVerdict;
  /** The lexical classifier's score and threshold, when it ran (it runs when the rules said ok). */
  lexical?: { score: number; threshold: number; vetoedBy?: SuppressionReason };
  /** What the model check said, when it ran. */
  model?: { label: 'crisis' | 'ok' | undefined; problem?: string };
}

export interface CrisisDetectorOptions {
  rules?: CrisisRules;
  /** The learned lexical classifier (models/safety-lexical.json); without it, the rules alone. */
  lexical?: LexicalClassifier;
  model?: ModelSafetyCheck;
  mode?: ModelCheckMode;
  /** Told about model-check failures (the verdict falls back to the rules). */
  onModelProblem?: (problem: string) => void;
}

/** Cancellations that speak for the message's frame, so they also veto the classifier. */
const VETOES = new Set<SuppressionReason>(['negated', 'media', 'information', 'hyperbole', 'past', 'accident', 'play', 'fear', 'other-object']);

function vetoOf(rules: RuleVerdict): SuppressionReason | undefined {
  return rules.suppressed.find((m) => VETOES.has(m.suppressedBy!))?.suppressedBy;
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

export class CrisisDetector {
  readonly rules: CrisisRules;
  readonly mode: ModelCheckMode;

  constructor(private readonly options: CrisisDetectorOptions = {}) {
    this.rules = options.rules ?? new CrisisRules();
    this.mode = options.model ? (options.mode ?? 'watch') : 'off';
  }

  /** The rules' verdict alone (`mascot safety classify --rules-only`). */
  classifyByRules(text: string): CrisisVerdict {
    const rules = this.rules.classify(text);
    return {
      label: rules.label,
      ...(rules.category ? { category: rules.category } : {}),
      source: 'rules',
      patterns: [...new Set(rules.hits.map((h) => h.patternId))],
      rules,
    };
  }

  /** Rules, then the lexical classifier (synchronous; `mascot safety classify` without --model). */
  classifyLocally(text: string): CrisisVerdict {
    const verdict = this.classifyByRules(text);
    const lexical = this.options.lexical;
    if (verdict.label === 'crisis' || !lexical) return verdict;
    const score = lexical.score(text);
    const vetoedBy = vetoOf(verdict.rules);
    const scored = { score: round4(score), threshold: lexical.threshold, ...(vetoedBy ? { vetoedBy } : {}) };
    if (score < lexical.threshold || vetoedBy) return { ...verdict, lexical: scored };
    return { ...verdict, label: 'crisis', category: 'unspecified', source: 'lexical', lexical: scored };
  }

  /** Whether the classifier's score decides this message: the rules said ok and cancelled nothing that vetoes it. */
  readonly leavesToClassifier = (text: string): boolean => {
    const rules = this.rules.classify(text);
    return rules.label === 'ok' && vetoOf(rules) === undefined;
  };

  async classify(text: string, signal?: AbortSignal): Promise<CrisisVerdict> {
    const verdict = this.classifyLocally(text);
    if (verdict.label === 'crisis' || !this.options.model || !this.worthAsking(text, verdict.rules)) return verdict;
    const answer = await this.options.model.check(text, signal);
    if (answer.label === undefined) {
      this.options.onModelProblem?.(answer.problem);
      return { ...verdict, model: { label: undefined, problem: answer.problem } };
    }
    if (answer.label === 'ok') return { ...verdict, model: { label: 'ok' } };
    return { ...verdict, label: 'crisis', category: 'unspecified', source: 'model', model: { label: 'crisis' } };
  }

  private worthAsking(text: string, rules: RuleVerdict): boolean {
    if (this.mode === 'all') return true;
    if (this.mode === 'off') return false;
    if (rules.suppressed.length > 0) return true;
    return this.rules.languages.some((l) => l.watchWords.test(normalizeText(text.slice(0, 8000), l.rewrites)));
  }
}
