// Loads persona packs from folders: `pack.yaml` plus one `<persona-id>.yaml` per persona.
// Collects every problem across every file before failing, so one run shows them all.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { describeIssues, packSchema, personaSchema, type Pack, type Persona } from './schema.ts';

export const PERSONAS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../personas');

export class PersonaFileError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid persona files:\n  ${problems.join('\n  ')}`);
    this.name = 'PersonaFileError';
  }
}

function readYaml(file: string, problems: string[]): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`${file}: cannot read: ${(err as Error).message}`);
    return undefined;
  }
  try {
    const doc = YAML.parseDocument(text, { prettyErrors: true });
    if (doc.errors.length > 0) {
      for (const e of doc.errors) problems.push(`${file}: YAML: ${e.message.split('\n')[0]}`);
      return undefined;
    }
    return doc.toJS();
  } catch (err) {
    // Alias bombs ("excessive alias count") and nesting too deep to build end up here.
    problems.push(`${file}: YAML: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

/** Load and validate one pack folder; throws PersonaFileError listing every problem. */
export function loadPack(dir: string): Pack {
  const problems: string[] = [];
  const packFile = path.join(dir, 'pack.yaml');
  if (!fs.existsSync(packFile)) throw new PersonaFileError([`${packFile}: missing (every pack folder needs a pack.yaml)`]);
  const rawPack = readYaml(packFile, problems);
  const packParsed = rawPack === undefined ? undefined : packSchema.safeParse(rawPack);
  if (packParsed && !packParsed.success) for (const line of describeIssues(packParsed.error)) problems.push(`${packFile}: ${line}`);
  const pack = packParsed?.success ? packParsed.data : undefined;

  const personas: Persona[] = [];
  const files = fs
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'pack.yaml')
    .sort();
  for (const name of files) {
    const file = path.join(dir, name);
    const raw = readYaml(file, problems);
    if (raw === undefined) continue;
    const parsed = personaSchema.safeParse(raw);
    if (!parsed.success) {
      for (const line of describeIssues(parsed.error)) problems.push(`${file}: ${line}`);
      continue;
    }
    const persona = parsed.data;
    const stem = name.replace(/\.ya?ml$/, '');
    if (persona.id !== stem) problems.push(`${file}: id: "${persona.id}" must match the file name "${stem}"`);
    if (personas.some((p) => p.id === persona.id)) problems.push(`${file}: id: "${persona.id}" is used by another persona`);
    if (pack) {
      persona.strategies.forEach((s, i) => {
        if (!pack.strategies[s]) problems.push(`${file}: strategies.${i}: "${s}" is not a strategy of pack "${pack.id}" (known: ${Object.keys(pack.strategies).join(', ')})`);
      });
    }
    persona.examples.forEach((ex, i) => {
      if (!persona.strategies.includes(ex.strategy)) problems.push(`${file}: examples.${i}.strategy: "${ex.strategy}" is not one of this persona's strategies`);
    });
    personas.push(persona);
  }
  if (personas.length === 0 && problems.length === 0) problems.push(`${dir}: no persona files (expected <persona-id>.yaml next to pack.yaml)`);
  if (problems.length > 0 || !pack) throw new PersonaFileError(problems);
  return { ...pack, personas, dir };
}

/** Load every pack under a root folder (each sub-folder with a pack.yaml). */
export function loadPacks(root: string = PERSONAS_DIR): Map<string, Pack> {
  if (!fs.existsSync(root)) throw new PersonaFileError([`${root}: persona folder not found`]);
  const packs = new Map<string, Pack>();
  const problems: string[] = [];
  for (const entry of fs.readdirSync(root, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || !fs.existsSync(path.join(root, entry.name, 'pack.yaml'))) continue;
    try {
      const pack = loadPack(path.join(root, entry.name));
      packs.set(pack.id, pack);
    } catch (err) {
      if (err instanceof PersonaFileError) problems.push(...err.problems);
      else throw err;
    }
  }
  if (problems.length > 0) throw new PersonaFileError(problems);
  if (packs.size === 0) throw new PersonaFileError([`${root}: no packs (sub-folders with a pack.yaml)`]);
  return packs;
}
