// Crisis detection as the gate uses it: the rules always run; the optional model-backed check
// runs after them and can only turn `ok` into `crisis`, never the other way (a missed crisis
// costs more than a needless calm message). In 'watch' mode the model sees only messages with
// risk vocabulary or a cancelled pattern; in 'all' mode every message the rules passed.
import { CrisisRules, type RuleVerdict } from './classifier.ts';
import type { CrisisCategory } from './language.ts';
import type { ModelSafetyCheck } from './model-check.ts';
import { normalizeText } from './normalize.ts';

export const MODEL_CHECK_MODES = ['off', 'watch', 'all'] as const;
export type ModelCheckMode = (typeof MODEL_CHECK_MODES)[number];

export interface CrisisVerdict {
  label: 'crisis' | 'ok';
  /** 'unspecified' when only the model saw a crisis (it does not name a category). */
  category?: CrisisCategory | 'unspecified';
  source: 'rules' | 'model';
  /** Ids of the patterns that counted (empty for a model verdict). */
  patterns: string[];
  rules: RuleVerdict;
  /** What the model check said, when it ran. */
  model?: { label: 'crisis' | 'ok' | undefined; problem?: string };
}

export interface CrisisDetectorOptions {
  rules?: CrisisRules;
  model?: ModelSafetyCheck;
  mode?: ModelCheckMode;
  /** Told about model-check failures (the verdict falls back to the rules). */
  onModelProblem?: (problem: string) => void;
}

export class CrisisDetector {
  readonly rules: CrisisRules;
  readonly mode: ModelCheckMode;

  constructor(private readonly options: CrisisDetectorOptions = {}) {
    this.rules = options.rules ?? new CrisisRules();
    this.mode = options.model ? (options.mode ?? 'watch') : 'off';
  }

  /** The rules' verdict alone (synchronous; `mascot safety classify` without --model). */
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

  async classify(text: string, signal?: AbortSignal): Promise<CrisisVerdict> {
    const verdict = this.classifyByRules(text);
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
