// Director policies by name, for the command line (ope, director promote) and evaluation:
//   heuristic | round-robin | random     the built-in policies
//   onnx:<file> (or any path ending .onnx) a director file
//   onnx@<version>                        a registered version
//   active                                what `onnx` serves for the pack now: the promoted version,
//                                         else the built-in models/<pack>-director.onnx, else the heuristic
//   llm                                   the llm director (needs MASCOT_LLM_BASE_URL and a model)
import fs from 'node:fs';
import type { Config } from '../config.ts';
import type { Pack } from '../persona/schema.ts';
import type { Db } from '../store/db.ts';
import { HeuristicPolicy } from './heuristic.ts';
import { builtinModelFile } from './learned.ts';
import { LlmPolicy } from './llm-policy.ts';
import { loadOnnxPolicy, policyFromBytes } from './onnx-policy.ts';
import type { Policy } from './policy.ts';
import { builtinPolicies } from './registry.ts';
import { DirectorVersions } from './versions.ts';
import { readDirectorInfo } from '../learn/director-model.ts';

export interface ResolvedPolicy {
  policy: Policy;
  /** What it is, for reports: "heuristic", "support-v3 (registered)", "models/x.onnx". */
  label: string;
  close(): Promise<void>;
}

export async function resolvePolicy(spec: string, pack: Pack, ctx: { config: Config; db?: Db }): Promise<ResolvedPolicy> {
  const none = async () => {};
  const builtin = builtinPolicies().get(spec);
  if (builtin) return { policy: builtin, label: spec, close: none };
  const file = spec.startsWith('onnx:') ? spec.slice(5) : spec.endsWith('.onnx') ? spec : undefined;
  if (file !== undefined) {
    const policy = await loadOnnxPolicy(file, pack, { executionProvider: ctx.config.MASCOT_ONNX_EP });
    return { policy, label: `${policy.version} (${file})`, close: () => policy.close() };
  }
  if (spec.startsWith('onnx@') || spec === 'active') {
    if (!ctx.db) throw new Error(`"${spec}" needs the database (MASCOT_DB)`);
    const versions = new DirectorVersions(ctx.db, ctx.config.MASCOT_DIRECTOR_DIR);
    const v = spec === 'active' ? versions.active(pack.id) : versions.get(pack.id, spec.slice(5));
    if (!v && spec !== 'active') throw new Error(`no registered director "${spec.slice(5)}" for pack "${pack.id}" (registered: ${versions.list(pack.id).map((x) => x.version).join(', ') || 'none'})`);
    if (v) {
      const bytes = versions.read(v);
      const policy = await policyFromBytes(bytes, readDirectorInfo(bytes, v.file), v.file, pack, { executionProvider: ctx.config.MASCOT_ONNX_EP });
      return { policy, label: `${v.version} (${spec === 'active' ? 'active, ' : ''}registered)`, close: () => policy.close() };
    }
    const shipped = builtinModelFile(pack.id);
    if (fs.existsSync(shipped)) {
      const policy = await loadOnnxPolicy(shipped, pack, { executionProvider: ctx.config.MASCOT_ONNX_EP });
      return { policy, label: `${policy.version} (active, built-in)`, close: () => policy.close() };
    }
    return { policy: new HeuristicPolicy(), label: 'heuristic (active: no learned director for this pack)', close: none };
  }
  if (spec === 'llm') {
    const model = ctx.config.MASCOT_DIRECTOR_LLM_MODEL ?? ctx.config.MASCOT_LLM_MODEL;
    if (!ctx.config.MASCOT_LLM_BASE_URL || !model) throw new Error('the llm director needs MASCOT_LLM_BASE_URL and MASCOT_DIRECTOR_LLM_MODEL (or MASCOT_LLM_MODEL)');
    const policy = new LlmPolicy({ baseURL: ctx.config.MASCOT_LLM_BASE_URL, apiKey: ctx.config.MASCOT_LLM_API_KEY, model, timeoutMs: ctx.config.MASCOT_DIRECTOR_LLM_TIMEOUT_MS, fallback: new HeuristicPolicy() });
    return { policy, label: `llm (${model})`, close: none };
  }
  throw new Error(`unknown director "${spec}": use heuristic, round-robin, random, llm, active, onnx@<version> or a .onnx file`);
}
