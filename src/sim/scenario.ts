// Scenario suites and user profiles: their file formats, loading with errors that name the file,
// the line or entry and the field, and the one shape the simulator works from (SimScript).
//
// A suite is a YAML file:
//   suite: support            name shown in reports
//   kind: support | meeting   which scenario fields apply
//   pack: support             persona pack it runs with (default: the kind)
//   description: ...
//   scenarios: [ ... ]
// or a JSONL file: an optional first line {"suite", "kind", "pack", "description"} (the header), then
// one scenario object per line (a line may carry its own "kind"). Fields of each kind: see docs/evaluation.md.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { z } from 'zod';
import type { Phase } from '../persona/schema.ts';
import { describeIssues } from '../persona/schema.ts';

export const SCENARIOS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scenarios');

const id = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be lowercase letters, digits and dashes (at most 64)');
const line = z.string().trim().min(1);
const lines = z.array(line).min(1);
const level = z.number().min(0).max(1);

/** How much of each kind of help the person needs at the start, 0..1 (explore: be heard, insight: make sense, action: act). */
const needsSchema = z.strictObject({ explore: level, insight: level, action: level });
export type Needs = z.infer<typeof needsSchema>;

export const supportScenarioSchema = z.strictObject({
  id,
  kind: z.literal('support').optional(),
  valence: z.enum(['positive', 'negative', 'neutral']),
  /** What is going on, in the third person (for judges and the llm user). */
  situation: line,
  /** The person's first message. */
  opening: line,
  /** What they need from the conversation, in words. */
  need: line,
  needs: needsSchema,
  /** What they go on to share as they feel heard (explore). */
  shares: lines,
  /** What they come to see when helped to think (insight). */
  realisations: lines,
  /** Steps they could take; said once they are ready to act (action). */
  steps: lines,
  /** What they say when rushed toward solutions before they feel heard. */
  whenRushed: line,
});
export type SupportScenario = z.infer<typeof supportScenarioSchema>;

const participantSchema = z.strictObject({
  name: z.string().regex(/^[A-Z][A-Za-z'-]{0,23}$/, 'must be a first name (a capital letter, then letters)'),
  /** Where they stand on the agenda, in their own words. */
  position: line,
  /** The concern or trade-off they raise when the discussion digs in. */
  concern: line,
});

export const meetingScenarioSchema = z.strictObject({
  id,
  kind: z.literal('meeting').optional(),
  type: z.enum(['academic', 'committee', 'product']),
  agenda: line,
  /** The chair's first message. The first participant chairs. */
  opening: line,
  participants: z.array(participantSchema).min(2).max(6),
  needs: needsSchema,
  /** Decisions a good meeting reaches, as the chair would state them. */
  decisions: lines,
  actionItems: z
    .array(
      z.strictObject({
        owner: z.string().min(1),
        task: line,
        due: line,
      }),
    )
    .min(1),
  /** What the chair says when the companions push for decisions before the positions are out. */
  whenRushed: line,
});
export type MeetingScenario = z.infer<typeof meetingScenarioSchema>;

export type Scenario = (SupportScenario & { kind: 'support' }) | (MeetingScenario & { kind: 'meeting' });
export type ScenarioKind = Scenario['kind'];

export interface Suite {
  name: string;
  kind: ScenarioKind;
  pack: string;
  description: string;
  /** The file it came from. */
  file: string;
  /** The split names in report order. */
  splits: string[];
  scenarios: Scenario[];
}

export const SPLITS: Record<ScenarioKind, readonly string[]> = {
  support: ['positive', 'negative', 'neutral'],
  meeting: ['academic', 'committee', 'product'],
};

export function splitOf(s: Scenario): string {
  return s.kind === 'support' ? s.valence : s.type;
}

export class ScenarioFileError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid scenario file:\n  ${problems.join('\n  ')}`);
    this.name = 'ScenarioFileError';
  }
}

const headerSchema = z.strictObject({
  suite: z.string().min(1),
  kind: z.enum(['support', 'meeting']),
  pack: id.optional(),
  description: z.string().default(''),
});

/** `support`, `meeting`, or the path of a suite file (YAML or JSONL). */
export function resolveSuitePath(nameOrPath: string): string {
  if (/^[a-z0-9-]+$/.test(nameOrPath) && !fs.existsSync(nameOrPath)) return path.join(SCENARIOS_DIR, `${nameOrPath}.yaml`);
  return path.resolve(nameOrPath);
}

/** Load and validate a suite; throws ScenarioFileError listing every problem found. */
export function loadSuite(nameOrPath: string): Suite {
  const file = resolveSuitePath(nameOrPath);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const known = fs.existsSync(SCENARIOS_DIR) ? fs.readdirSync(SCENARIOS_DIR).filter((f) => /\.(ya?ml|jsonl)$/.test(f) && f !== 'profiles.yaml') : [];
    throw new ScenarioFileError([`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); built-in suites: ${known.map((f) => f.replace(/\.\w+$/, '')).join(', ')}`]);
  }
  const problems: string[] = [];
  const entries: { where: string; raw: unknown }[] = [];
  let header: unknown;
  if (file.endsWith('.jsonl')) {
    text.split('\n').forEach((l, i) => {
      if (!l.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(l);
      } catch (err) {
        problems.push(`${file}:${i + 1}: not JSON (${(err as Error).message})`);
        return;
      }
      if (header === undefined && entries.length === 0 && isObject(value) && 'suite' in value) header = value;
      else entries.push({ where: `${file}:${i + 1}`, raw: value });
    });
    header ??= { suite: path.basename(file, '.jsonl'), kind: kindOf(entries[0]?.raw) ?? 'support' };
  } else {
    const doc = YAML.parseDocument(text, { prettyErrors: true });
    if (doc.errors.length > 0) throw new ScenarioFileError(doc.errors.map((e) => `${file}: YAML: ${e.message.split('\n')[0]}`));
    const js: unknown = doc.toJS();
    if (!isObject(js)) throw new ScenarioFileError([`${file}: expected a mapping with suite, kind and scenarios`]);
    const { scenarios, ...rest } = js;
    header = rest;
    if (!Array.isArray(scenarios)) problems.push(`${file}: scenarios: must be a list of scenarios`);
    else scenarios.forEach((raw, i) => entries.push({ where: `${file}: scenarios.${i}`, raw }));
  }

  const h = headerSchema.safeParse(header);
  if (!h.success) throw new ScenarioFileError(describeIssues(h.error).map((l) => `${file}: ${l}`));
  const scenarios: Scenario[] = [];
  const seen = new Set<string>();
  for (const { where, raw } of entries) {
    const kind = kindOf(raw) ?? h.data.kind;
    const parsed = kind === 'meeting' ? meetingScenarioSchema.safeParse(raw) : supportScenarioSchema.safeParse(raw);
    if (!parsed.success) {
      const name = isObject(raw) && typeof raw.id === 'string' ? ` (${raw.id})` : '';
      for (const l of describeIssues(parsed.error)) problems.push(`${where}${name}: ${l}`);
      continue;
    }
    const s = { ...parsed.data, kind } as Scenario;
    if (seen.has(s.id)) problems.push(`${where}: id: "${s.id}" is used by another scenario`);
    seen.add(s.id);
    if (s.kind === 'meeting') {
      const names = s.participants.map((p) => p.name);
      s.actionItems.forEach((a, j) => {
        if (!names.includes(a.owner)) problems.push(`${where} (${s.id}): actionItems.${j}.owner: "${a.owner}" is not a participant (${names.join(', ')})`);
      });
    }
    scenarios.push(s);
  }
  if (problems.length === 0 && scenarios.length === 0) problems.push(`${file}: no scenarios`);
  if (problems.length > 0) throw new ScenarioFileError(problems);
  const kinds = new Set(scenarios.map((s) => s.kind));
  if (kinds.size > 1) throw new ScenarioFileError([`${file}: mixes support and meeting scenarios; put each kind in its own suite`]);
  const kind = scenarios[0]!.kind;
  const present = new Set(scenarios.map(splitOf));
  return {
    name: h.data.suite,
    kind,
    pack: h.data.pack ?? kind,
    description: h.data.description,
    file,
    splits: SPLITS[kind].filter((s) => present.has(s)),
    scenarios,
  };
}

function kindOf(raw: unknown): ScenarioKind | undefined {
  return isObject(raw) && (raw.kind === 'support' || raw.kind === 'meeting') ? raw.kind : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// --- user profiles ---------------------------------------------------------------------------

const phaseLevels = (min: number, max: number) => z.strictObject({ explore: z.number().min(min).max(max), insight: z.number().min(min).max(max), action: z.number().min(min).max(max) });

export const profileSchema = z.strictObject({
  id,
  label: line,
  description: line,
  /** Content sentences per reply when at ease (1-3). */
  verbosity: z.number().int().min(1).max(3),
  /** Starting patience, 0..1: how much rushing, lecturing and repetition they take before leaving. */
  patience: z.number().min(0.2).max(1),
  /** Multiplies what rushing costs them. */
  rushSensitivity: z.number().min(0).max(3),
  /** Companion turns after one of their messages that they welcome; more feel like a lecture. */
  turnTolerance: z.number().int().min(1).max(4),
  /** Companion words per message they take in comfortably. */
  wordBudget: z.number().int().min(20).max(400),
  /** Scales the scenario's needs (someone who wants to act has a larger action need). */
  needs: phaseLevels(0, 2),
  /** How much each kind of help lands with them. */
  gains: phaseLevels(0, 2),
  /** Words of their own: how they hedge, thank, and leave. */
  voice: z.strictObject({ hedge: line, thanks: line, leave: line, overwhelmed: line, repeated: line }),
});
export type UserProfile = z.infer<typeof profileSchema>;

export const PROFILES_FILE = path.join(SCENARIOS_DIR, 'profiles.yaml');

export function loadProfiles(file: string = PROFILES_FILE): UserProfile[] {
  let js: unknown;
  try {
    const doc = YAML.parseDocument(fs.readFileSync(file, 'utf8'), { prettyErrors: true });
    if (doc.errors.length > 0) throw new ScenarioFileError(doc.errors.map((e) => `${file}: YAML: ${e.message.split('\n')[0]}`));
    js = doc.toJS();
  } catch (err) {
    if (err instanceof ScenarioFileError) throw err;
    throw new ScenarioFileError([`${file}: cannot read (${(err as Error).message})`]);
  }
  const list = isObject(js) ? js.profiles : undefined;
  if (!Array.isArray(list) || list.length === 0) throw new ScenarioFileError([`${file}: profiles: must be a non-empty list`]);
  const problems: string[] = [];
  const profiles: UserProfile[] = [];
  list.forEach((raw, i) => {
    const parsed = profileSchema.safeParse(raw);
    if (!parsed.success) for (const l of describeIssues(parsed.error)) problems.push(`${file}: profiles.${i}: ${l}`);
    else if (profiles.some((p) => p.id === parsed.data.id)) problems.push(`${file}: profiles.${i}.id: "${parsed.data.id}" is used twice`);
    else profiles.push(parsed.data);
  });
  if (problems.length > 0) throw new ScenarioFileError(problems);
  return profiles;
}

// --- the simulator's view of a scenario ----------------------------------------------------------

/** Someone in the conversation on the human side. */
export interface SimSpeaker {
  id: string;
  name: string;
}

/** A line the person (or a participant) may say, and who says it. */
export interface ScriptLine {
  speaker: SimSpeaker;
  text: string;
}

/** A scenario as the simulator uses it: who talks, what they open with, and what each kind of help unlocks. */
export interface SimScript {
  scenario: Scenario;
  /** Who speaks when nobody in particular does (the person, or the meeting's chair). */
  lead: SimSpeaker;
  opening: ScriptLine;
  needs: Needs;
  /** Content unlocked as each need is met, in order. */
  lines: Record<Phase, ScriptLine[]>;
  whenRushed: string;
  /** What the lead says when everything is settled. */
  closing: string;
}

const speakerId = (name: string) => `sim-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;

export function scriptOf(scenario: Scenario, personName = 'Sam'): SimScript {
  if (scenario.kind === 'support') {
    const person = { id: speakerId(personName), name: personName };
    const say = (text: string): ScriptLine => ({ speaker: person, text });
    return {
      scenario,
      lead: person,
      opening: say(scenario.opening),
      needs: scenario.needs,
      lines: {
        explore: scenario.shares.map(say),
        insight: scenario.realisations.map(say),
        action: scenario.steps.map((step) => say(`Maybe I could ${lowerFirst(step).replace(/[.!]+$/, '')}.`)),
      },
      whenRushed: scenario.whenRushed,
      closing: `I think I'll ${lowerFirst(scenario.steps[0]!).replace(/[.!]+$/, '')}.`,
    };
  }
  const people = scenario.participants.map((p) => ({ id: speakerId(p.name), name: p.name }));
  const chair = people[0]!;
  const by = (name: string) => people.find((p) => p.name === name) ?? chair;
  return {
    scenario,
    lead: chair,
    opening: { speaker: chair, text: scenario.opening },
    needs: scenario.needs,
    lines: {
      explore: scenario.participants.map((p) => ({ speaker: by(p.name), text: p.position })),
      insight: scenario.participants.map((p) => ({ speaker: by(p.name), text: p.concern })),
      action: [
        ...scenario.decisions.map((d) => ({ speaker: chair, text: d })),
        ...scenario.actionItems.map((a) => ({ speaker: by(a.owner), text: `I'll ${lowerFirst(a.task).replace(/[.!]+$/, '')} by ${a.due}.` })),
      ],
    },
    whenRushed: scenario.whenRushed,
    closing: `So we have it: ${scenario.decisions.map((d) => lowerFirst(d).replace(/[.!]+$/, '')).join('; ')}. Thanks, everyone.`,
  };
}

/** "Ask for feedback." -> "ask for feedback." (names and "I" keep their capital). */
export function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) && !/^I\b/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}
