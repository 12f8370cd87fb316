// Checks a verb's arguments against its declaration, and reads typed command text (Slack's
// `/mascot persona set anchor talkativeness 0.3`) into a verb and arguments. Every problem
// becomes one sentence saying which argument is wrong and what is accepted.
import type { ArgSpec, ArgValue, MascotVerb, RawArgs } from './verb.ts';
import { ArgumentProblem } from './verb.ts';

/** The arguments of a verb as a usage line shows them: ` <persona> <field> <value> [scope]`. */
export function argsUsage(verb: MascotVerb): string {
  return verb.args.map((a) => (a.required ? ` <${a.name}>` : ` [${a.name}]`)).join('');
}

/** The usage line of a verb: `persona set <persona> <field> <value> [scope]`. */
export function usageOf(verb: MascotVerb): string {
  return `${verb.name}${argsUsage(verb)}`;
}

function accepted(spec: ArgSpec): string {
  if (spec.choices) return `one of ${spec.choices.join(', ')}`;
  if (spec.type === 'integer') return `a whole number${range(spec)}`;
  if (spec.type === 'number') return `a number${range(spec)}`;
  return spec.maxLength ? `text of at most ${spec.maxLength} characters` : 'text';
}

function range(spec: ArgSpec): string {
  if (spec.min !== undefined && spec.max !== undefined) return ` from ${spec.min} to ${spec.max}`;
  if (spec.min !== undefined) return ` of at least ${spec.min}`;
  if (spec.max !== undefined) return ` of at most ${spec.max}`;
  return '';
}

/** Validate raw arguments; throws ArgumentProblem naming the argument and what is accepted. */
export function checkArgs(verb: MascotVerb, raw: RawArgs): Record<string, ArgValue> {
  const known = new Set(verb.args.map((a) => a.name));
  const unknown = Object.keys(raw).filter((k) => !known.has(k) && raw[k] !== undefined);
  if (unknown.length > 0)
    throw new ArgumentProblem(`\`${verb.name}\` has no argument ${unknown.map((u) => `"${u}"`).join(', ')}. Usage: \`${usageOf(verb)}\``);
  const out: Record<string, ArgValue> = {};
  for (const spec of verb.args) {
    const value = raw[spec.name];
    if (value === undefined || (typeof value === 'string' && value.trim() === '')) {
      if (spec.required) throw new ArgumentProblem(`\`${verb.name}\` needs ${spec.name} (${spec.description}; ${accepted(spec)}). Usage: \`${usageOf(verb)}\``);
      continue;
    }
    out[spec.name] = checkValue(verb, spec, value);
  }
  return out;
}

function checkValue(verb: MascotVerb, spec: ArgSpec, value: ArgValue): ArgValue {
  const problem = () => new ArgumentProblem(`${spec.name} "${String(value)}" is not accepted by \`${verb.name}\`: expected ${accepted(spec)}.`);
  if (spec.type === 'string') {
    const text = String(value).trim();
    if (spec.choices) {
      const match = spec.choices.find((c) => c.toLowerCase() === text.toLowerCase());
      if (!match) throw problem();
      return match;
    }
    if (spec.maxLength !== undefined && text.length > spec.maxLength) throw problem();
    return text;
  }
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw problem();
  if (spec.type === 'integer' && !Number.isInteger(n)) throw problem();
  if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) throw problem();
  return n;
}

/** Split command text into words; "double" or 'single' quotes keep spaces together. */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of text.matchAll(re)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

export interface ParsedText {
  verb: string;
  args: Record<string, string>;
}

/**
 * Read typed command text against a verb table: the longest verb name that matches the leading
 * words, then `name=value` words for any argument, then the remaining words in declaration order
 * (a `rest` argument takes the rest of the line). Unknown verbs are returned as-is for the
 * caller to answer with help.
 */
export function parseCommandText(text: string, verbs: ReadonlyMap<string, MascotVerb>): ParsedText {
  const words = tokenize(text.trim());
  let verb: MascotVerb | undefined;
  let used = 0;
  for (const v of verbs.values()) {
    const parts = v.name.split(' ');
    if (parts.length > used && parts.every((p, i) => words[i]?.toLowerCase() === p)) {
      verb = v;
      used = parts.length;
    }
  }
  if (!verb) return { verb: words.slice(0, 2).join(' ').toLowerCase(), args: {} };

  const args: Record<string, string> = {};
  const positional: string[] = [];
  const names = new Set(verb.args.map((a) => a.name));
  for (const word of words.slice(used)) {
    const m = /^([a-z]+)[=:](.*)$/i.exec(word);
    if (m && names.has(m[1]!.toLowerCase())) args[m[1]!.toLowerCase()] = m[2]!;
    else positional.push(word);
  }
  const open = verb.args.filter((a) => args[a.name] === undefined);
  for (let i = 0; i < open.length && positional.length > 0; i++) {
    const spec = open[i]!;
    args[spec.name] = spec.rest ? positional.splice(0).join(' ') : positional.shift()!;
  }
  if (positional.length > 0) throw new ArgumentProblem(`\`${verb.name}\` got more words than it takes ("${positional.join(' ')}"). Usage: \`${usageOf(verb)}\``);
  return { verb: verb.name, args };
}
