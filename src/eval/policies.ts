// One place that turns a policy name of `mascot eval` (and of training scripts) into a Policy:
//   heuristic | round-robin | random   the built-in directors
//   onnx:<file>                        a learned director file for the pack (src/director/onnx-policy.ts)
//   llm                                the llm director on the configured endpoint, heuristic fallback
// Other kinds plug in with registerPolicyResolver('kind', resolver): a name "kind" or "kind:arg"
// is then handed to that resolver with the text after the colon.
import type { Config } from '../config.ts';
import { HeuristicPolicy } from '../director/heuristic.ts';
import { LlmPolicy } from '../director/llm-policy.ts';
import { loadOnnxPolicy } from '../director/onnx-policy.ts';
import type { Policy } from '../director/policy.ts';
import { builtinPolicies } from '../director/registry.ts';
import type { Pack } from '../persona/schema.ts';

export interface PolicyContext {
  pack: Pack;
  config: Config;
}

/** Builds the policy `kind:arg` (arg is '' for a bare name) for a pack. */
export type PolicyResolver = (arg: string, ctx: PolicyContext) => Policy | Promise<Policy>;

export class PolicyNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyNameError';
  }
}

const resolvers = new Map<string, PolicyResolver>();

export function registerPolicyResolver(kind: string, resolver: PolicyResolver): void {
  resolvers.set(kind, resolver);
}

/** Names accepted now, for error messages and --help. */
export function knownPolicyNames(): string[] {
  return [...builtinPolicies().keys(), ...[...resolvers.keys()].map((k) => (k === 'onnx' ? 'onnx:<file>' : k))];
}

export async function resolvePolicy(name: string, ctx: PolicyContext): Promise<Policy> {
  const builtin = builtinPolicies().get(name);
  if (builtin) return builtin;
  const i = name.indexOf(':');
  const kind = i < 0 ? name : name.slice(0, i);
  const resolver = resolvers.get(kind);
  if (!resolver) throw new PolicyNameError(`unknown policy "${name}" (known: ${knownPolicyNames().join(', ')})`);
  try {
    return await resolver(i < 0 ? '' : name.slice(i + 1), ctx);
  } catch (err) {
    throw new PolicyNameError(`policy "${name}" for pack "${ctx.pack.id}": ${(err as Error).message}`);
  }
}

/** Release what a policy holds (an onnxruntime session), if anything. */
export async function closePolicy(policy: Policy): Promise<void> {
  const closable = policy as Policy & { close?: () => Promise<void> | void };
  await closable.close?.();
}

registerPolicyResolver('onnx', (file, { pack, config }) => {
  if (!file) throw new Error('name the director file: onnx:<file>');
  return loadOnnxPolicy(file, pack, { executionProvider: config.MASCOT_ONNX_EP });
});

registerPolicyResolver('llm', (_arg, { config }) => {
  if (!config.MASCOT_LLM_BASE_URL) throw new Error('needs MASCOT_LLM_BASE_URL (an OpenAI-compatible endpoint)');
  const model = config.MASCOT_DIRECTOR_LLM_MODEL ?? config.MASCOT_LLM_MODEL;
  if (!model) throw new Error('needs MASCOT_DIRECTOR_LLM_MODEL or MASCOT_LLM_MODEL');
  return new LlmPolicy({ baseURL: config.MASCOT_LLM_BASE_URL, apiKey: config.MASCOT_LLM_API_KEY, model, timeoutMs: config.MASCOT_DIRECTOR_LLM_TIMEOUT_MS, fallback: new HeuristicPolicy() });
});
