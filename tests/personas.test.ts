import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadPack, loadPacks, PERSONAS_DIR, PersonaFileError } from '../src/persona/loader.ts';

const EXPECTED = {
  support: { anchor: ['reflection', 'restatement', 'reassurance'], catalyst: ['question', 'reframing'], beacon: ['affirmation', 'encouragement'], guide: ['suggestion', 'information'] },
  meeting: { facilitator: ['invite-input', 'clarify', 'timekeeping'], skeptic: ['challenge', 'clarify'], scribe: ['summarize', 'record-decision'], planner: ['action-item', 'record-decision'] },
} as const;

describe('shipped persona packs', () => {
  const packs = loadPacks();

  it('load without error, with the expected personas and strategies', () => {
    expect([...packs.keys()].sort()).toEqual(['meeting', 'support']);
    for (const [packId, personas] of Object.entries(EXPECTED)) {
      const pack = packs.get(packId)!;
      expect(Object.fromEntries(pack.personas.map((p) => [p.id, p.strategies]))).toEqual(personas);
    }
  });

  it('give every persona an identity, a distinct voice, boundaries and an example per strategy', () => {
    for (const pack of packs.values()) {
      const voices = new Set<string>();
      for (const p of pack.personas) {
        expect(p.avatarUrl).toBe(`https://mascot.example/avatars/${p.id}.png`);
        expect(p.identity.discord?.tokenEnv).toBe(`DISCORD_TOKEN_${p.id.toUpperCase()}`);
        expect(p.identity.slack?.tokenEnv).toBe(`SLACK_BOT_TOKEN_${p.id.toUpperCase()}`);
        expect(p.identity.slack?.iconEmoji).toMatch(/^:[a-z_]+:$/);
        // The model comes from MASCOT_LLM_MODEL unless an operator pins one.
        expect(p.generation.model).toBeUndefined();
        expect(p.voice.length).toBeGreaterThanOrEqual(3);
        expect(p.never.length).toBeGreaterThanOrEqual(3);
        for (const s of p.strategies) expect(p.examples.some((e) => e.strategy === s), `${p.id} has an example of ${s}`).toBe(true);
        for (const v of p.voice) {
          expect(voices.has(v), `voice rule shared between personas: ${v}`).toBe(false);
          voices.add(v);
        }
      }
    }
    const talk = Object.fromEntries(packs.get('support')!.personas.map((p) => [p.id, p.talkativeness]));
    expect(talk).toEqual({ anchor: 0.7, catalyst: 0.6, beacon: 0.5, guide: 0.5 });
  });

  it('state the boundaries the support circle promises', () => {
    const support = packs.get('support')!;
    const never = (id: string) => support.personas.find((p) => p.id === id)!.never.join(' ');
    expect(never('anchor')).toMatch(/advice/i);
    expect(never('guide')).toMatch(/more than one step/i);
    for (const p of support.personas) expect(p.never.join(' ')).toMatch(/diagnos/i);
  });
});

describe('invalid persona files', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  const anchorYaml = fs.readFileSync(path.join(PERSONAS_DIR, 'support', 'anchor.yaml'), 'utf8');

  /** A support pack folder holding the given files (pack.yaml copied unless `noPack`). */
  function packDir(files: Record<string, string>, noPack = false): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-personas-'));
    dirs.push(dir);
    if (!noPack) fs.copyFileSync(path.join(PERSONAS_DIR, 'support', 'pack.yaml'), path.join(dir, 'pack.yaml'));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return dir;
  }

  /** The anchor persona with some fields changed. */
  function anchorWith(change: (doc: Record<string, unknown>) => void): string {
    const doc = YAML.parse(anchorYaml) as Record<string, unknown>;
    change(doc);
    return YAML.stringify(doc);
  }

  function problemsOf(dir: string): string[] {
    try {
      loadPack(dir);
    } catch (err) {
      expect(err).toBeInstanceOf(PersonaFileError);
      return (err as PersonaFileError).problems;
    }
    throw new Error('expected the pack to be rejected');
  }

  it('accepts an unchanged copy (the cases below fail only for their own reason)', () => {
    expect(loadPack(packDir({ 'anchor.yaml': anchorYaml })).personas.map((p) => p.id)).toEqual(['anchor']);
  });

  it('names the file and the field of a value of the wrong type', () => {
    const dir = packDir({ 'anchor.yaml': anchorWith((d) => (d.talkativeness = 'very')) });
    const [problem, ...rest] = problemsOf(dir);
    expect(rest).toEqual([]);
    expect(problem).toContain(path.join(dir, 'anchor.yaml'));
    expect(problem).toMatch(/talkativeness: .*number/);
  });

  it('names a strategy the pack does not declare', () => {
    const dir = packDir({ 'anchor.yaml': anchorWith((d) => (d.strategies = ['reflection', 'hypnosis'])) });
    const problems = problemsOf(dir);
    expect(problems.some((p) => p.includes(path.join(dir, 'anchor.yaml')) && /strategies\.1: "hypnosis" is not a strategy of pack "support"/.test(p))).toBe(true);
  });

  it('rejects an id that does not match the file name', () => {
    const dir = packDir({ 'anchor.yaml': anchorWith((d) => (d.id = 'harbor')) });
    expect(problemsOf(dir)).toEqual([`${path.join(dir, 'anchor.yaml')}: id: "harbor" must match the file name "anchor"`]);
  });

  it('reports broken YAML with the file name', () => {
    const dir = packDir({ 'anchor.yaml': 'id: anchor\nvoice: [unclosed\n  role: : :\n' });
    const [problem] = problemsOf(dir);
    expect(problem).toContain(path.join(dir, 'anchor.yaml'));
    expect(problem).toMatch(/YAML/);
  });

  it('rejects an example of a strategy the persona does not have', () => {
    const dir = packDir({
      'anchor.yaml': anchorWith((d) => {
        (d.examples as { strategy: string }[])[1]!.strategy = 'suggestion';
      }),
    });
    expect(problemsOf(dir)).toEqual([`${path.join(dir, 'anchor.yaml')}: examples.1.strategy: "suggestion" is not one of this persona's strategies`]);
  });

  it('requires a pack.yaml in every pack folder', () => {
    const dir = packDir({ 'anchor.yaml': anchorYaml }, true);
    const [problem] = problemsOf(dir);
    expect(problem).toContain(path.join(dir, 'pack.yaml'));
    expect(problem).toMatch(/missing/);
  });

  it('lists every problem of every file in one run, and keeps nothing half-loaded', () => {
    const dir = packDir({
      'anchor.yaml': anchorWith((d) => (d.avatarUrl = 'not a url')),
      'guide.yaml': anchorWith((d) => (d.id = 'guide')).replace('displayName: Anchor', 'displayName: 42\nunknownField: true'),
    });
    const problems = problemsOf(dir);
    expect(problems.some((p) => p.startsWith(path.join(dir, 'anchor.yaml')) && p.includes('avatarUrl'))).toBe(true);
    expect(problems.some((p) => p.startsWith(path.join(dir, 'guide.yaml')) && p.includes('displayName'))).toBe(true);
    expect(problems.some((p) => p.startsWith(path.join(dir, 'guide.yaml')) && p.includes('unknownField'))).toBe(true);
  });
});
