// The `llm` director (the MASCOT paper's meta-agent): a model behind an OpenAI-compatible API reads
// the conversation, the personas and the allowed actions, and answers the directive as JSON:
//   {"action": "speak", "persona": "anchor", "strategy": "reflection", "instruction": "..."}
//   {"action": "yield"}
// An answer that is late, unreachable, not JSON, or names an action not allowed now is not used:
// the fallback policy (the heuristic) decides that turn, and the decision's reason says why.
// The logged distribution is the model's choice with the pack's floor on every allowed action.
import OpenAI from 'openai';
import { actionKey, parseActionKey, type Action, type Decision } from '../core/types.ts';
import type { Logger } from '../log.ts';
import type { Rng } from '../util/rng.ts';
import { actionMask, actionSpace, applyFloor, decideFrom } from './actions.ts';
import type { DirectorState, Policy } from './policy.ts';
import { createOpenAIClient } from '../speaker/openai-client.ts';

export interface LlmPolicyOptions {
  baseURL: string;
  apiKey?: string;
  model: string;
  /** The director sits on the reply path: a short timeout, no retries. */
  timeoutMs?: number;
  /** Ask for JSON mode (`response_format: json_object`); servers that reject it get plain prompting. */
  jsonMode?: boolean;
  fallback: Policy;
  log?: Logger;
}

const MAX_INSTRUCTION = 300;

export class LlmPolicy implements Policy {
  readonly id = 'llm';
  readonly version: string;
  private readonly client: OpenAI;
  private jsonMode: boolean;

  constructor(private readonly options: LlmPolicyOptions) {
    this.version = options.model;
    this.jsonMode = options.jsonMode ?? true;
    this.client = createOpenAIClient({ baseURL: options.baseURL, apiKey: options.apiKey, timeoutMs: options.timeoutMs ?? 5000, retries: 0 });
  }

  async decide(state: DirectorState, rng: Rng): Promise<Decision> {
    const slots = actionSpace(state.pack);
    const mask = actionMask(state, slots);
    const allowed = slots.filter((_, i) => mask[i]);
    let choice: { action: Action; instruction?: string; reason?: string };
    try {
      choice = parseDirective(await this.ask(state, allowed), allowed);
    } catch (err) {
      const why = (err as Error).message;
      this.options.log?.warn({ model: this.options.model, err: why }, 'llm director answer unusable; heuristic decides this turn');
      const decision = await this.options.fallback.decide(state, rng);
      return { ...decision, reason: `${decision.reason} (llm director: ${why})` };
    }
    const chosen = slots.indexOf(actionKey(choice.action));
    const probabilities = applyFloor(
      slots.map((_, i) => (i === chosen ? 1 : 0)),
      mask,
      state.floor,
    );
    const decision = decideFrom(state, slots, probabilities, rng, {
      policyId: this.id,
      policyVersion: this.version,
      reason: (a) => (actionKey(a) === actionKey(choice.action) ? (choice.reason ?? 'chosen by the llm director') : 'exploration floor (the llm director chose otherwise)'),
    });
    // The model's own instruction replaces the pack's when the chosen action is the one taken.
    if (decision.directive && choice.instruction && actionKey(decision.action) === actionKey(choice.action)) decision.directive = { ...decision.directive, instruction: choice.instruction };
    return decision;
  }

  private async ask(state: DirectorState, allowed: string[]): Promise<string> {
    const messages = directorPrompt(state, allowed);
    const request = { model: this.options.model, messages, temperature: 0, max_tokens: 200 };
    try {
      const res = await this.client.chat.completions.create(this.jsonMode ? { ...request, response_format: { type: 'json_object' } } : request);
      return res.choices[0]?.message?.content ?? '';
    } catch (err) {
      // Some servers reject response_format; remember and ask plainly from now on.
      if (this.jsonMode && err instanceof OpenAI.BadRequestError && /response_format|json/i.test(err.message)) {
        this.jsonMode = false;
        return this.ask(state, allowed);
      }
      if (err instanceof OpenAI.APIConnectionTimeoutError) throw new Error(`no answer within ${this.options.timeoutMs ?? 5000} ms`);
      if (err instanceof OpenAI.APIError) throw new Error(`model endpoint error ${err.status ?? ''}: ${err.message.split('\n')[0]}`.replace('  ', ' '));
      throw err;
    }
  }
}

/** The messages sent to the model: who is in the room, what was said, what may happen next. */
export function directorPrompt(state: DirectorState, allowed: string[]): { role: 'system' | 'user'; content: string }[] {
  const personas = state.personas.map((p) => `- ${p.id} (${p.displayName}, ${p.role}): strategies ${p.strategies.join(', ')}`).join('\n');
  const strategies = Object.entries(state.pack.strategies)
    .map(([id, s]) => `- ${id} [${s.phase}]: ${s.label}. ${s.instruction}`)
    .join('\n');
  const transcript = state.transcript.map((t) => `${t.author.name}${t.strategy ? ` [${t.strategy}]` : ''}: ${t.text}`).join('\n');
  const round = state.roundTurns.length ? state.roundTurns.map((t) => `${t.personaId}:${t.strategy}`).join(', ') : 'none yet';
  return [
    {
      role: 'system',
      content: [
        `You direct a small group of companion personas in a conversation (${state.pack.name}). After each human message you decide who speaks next and with which strategy, or that the companions stay quiet ("yield") and let the human talk.`,
        'Help in the order people need it: first make them feel heard (explore), then help them think (insight), then one small step (action). Never a wall of bots: yield once what the message needs has been said.',
        `Personas:\n${personas}`,
        `Strategies:\n${strategies}`,
        'Answer with one JSON object only: {"action": "speak", "persona": "<id>", "strategy": "<id>", "instruction": "<one line for the speaker>", "reason": "<a few words>"} or {"action": "yield", "reason": "<a few words>"}.',
      ].join('\n\n'),
    },
    {
      role: 'user',
      content: [
        `Conversation (oldest first):\n${transcript}`,
        `Companion turns since the human's last message: ${round} (at most ${state.maxBotTurns}).`,
        state.mentions.length ? `The human addressed: ${state.mentions.join(', ')}.` : '',
        `Allowed now: ${allowed.join(', ')}.`,
      ]
        .filter(Boolean)
        .join('\n\n'),
    },
  ];
}

/** Read the model's answer; throws saying what is wrong with it. */
export function parseDirective(text: string, allowed: readonly string[]): { action: Action; instruction?: string; reason?: string } {
  const json = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error(`answer is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
  if (typeof raw !== 'object' || raw === null) throw new Error('answer is not a JSON object');
  const o = raw as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string).trim() : undefined);
  const reason = str('reason')?.slice(0, 200);
  const kind = str('action')?.toLowerCase();
  let key: string;
  if (kind === 'yield') key = 'yield';
  else if (kind === 'speak') {
    const persona = str('persona');
    const strategy = str('strategy');
    if (!persona || !strategy) throw new Error('a "speak" answer needs "persona" and "strategy"');
    key = `${persona.toLowerCase()}:${strategy.toLowerCase()}`;
  } else throw new Error(`"action" must be "speak" or "yield" (got ${JSON.stringify(o.action)})`);
  if (!allowed.includes(key)) throw new Error(`"${key}" is not allowed now (allowed: ${allowed.join(', ')})`);
  const instruction = str('instruction')?.slice(0, MAX_INSTRUCTION);
  return { action: parseActionKey(key), ...(instruction ? { instruction } : {}), ...(reason ? { reason } : {}) };
}
