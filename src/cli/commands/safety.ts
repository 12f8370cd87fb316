// `mascot safety ...`: the crisis classifier from the command line, its evaluation on labelled
// sets, the documented patterns, recent crisis events, and per-server safety settings.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { CrisisRules } from '../../safety/classifier.ts';
import { CrisisDetector, type CrisisVerdict } from '../../safety/detector.ts';
import { evaluate, parseLabelledSet, type Evaluation } from '../../safety/evaluation.ts';
import { DEFAULT_LEXICAL_MODEL, developmentSetFiles, loadWordVectors, SAFETY_DATASETS, trainLexical } from '../../safety/lexical.ts';
import { languagesFor } from '../../safety/patterns/index.ts';
import { detectorFromConfig } from '../../safety/setup.ts';
import { ALL_SPACES, SafetyStore } from '../../safety/store.ts';
import { openDatabase } from '../../store/db.ts';
import { numberFlag, stringFlag, UsageError, type Command, type CommandContext } from '../command.ts';

/**
 * A switch such as --json. The shared parser gives a switch the next word as its value when that
 * word is no flag ("--json set.jsonl"): such a word is taken back as a positional argument.
 */
function switchOn(ctx: CommandContext, name: string): boolean {
  const v = ctx.flags[name];
  if (typeof v === 'string') {
    ctx.args.push(v);
    ctx.flags[name] = true;
  }
  return ctx.flags[name] === true;
}

/**
 * Rules and the lexical classifier, as the gate runs them; --rules-only leaves the classifier out;
 * --model adds the configured model check (MASCOT_SAFETY_MODEL_CHECK, or 'all').
 */
function detectorFor(ctx: CommandContext): CrisisDetector {
  const config = loadConfig(ctx.env);
  const log = createLogger(config.MASCOT_LOG_LEVEL);
  if (switchOn(ctx, 'rules-only')) return new CrisisDetector({ rules: new CrisisRules(languagesFor(config.MASCOT_SAFETY_LANGUAGES)) });
  if (!switchOn(ctx, 'model')) return detectorFromConfig({ ...config, MASCOT_SAFETY_MODEL_CHECK: 'off' }, log);
  const mode = config.MASCOT_SAFETY_MODEL_CHECK === 'off' ? 'all' : config.MASCOT_SAFETY_MODEL_CHECK;
  return detectorFromConfig({ ...config, MASCOT_SAFETY_MODEL_CHECK: mode }, log);
}

function explain(v: CrisisVerdict): string {
  const kept = v.rules.hits.map((h) => `${h.patternId}`);
  const cancelled = v.rules.suppressed.map((s) => `${s.patternId}(${s.suppressedBy})`);
  const lexical = v.lexical ? `lexical:${v.lexical.score.toFixed(3)}/${v.lexical.threshold.toFixed(3)}${v.lexical.vetoedBy ? `(vetoed: ${v.lexical.vetoedBy})` : ''}` : '';
  const model = v.model ? `model:${v.model.label ?? `unavailable (${v.model.problem})`}` : '';
  return [v.label, v.category ?? '-', v.source, kept.join(',') || '-', cancelled.join(',') || '-', lexical, model].filter(Boolean).join('\t');
}

const classify: Command = {
  name: 'safety classify',
  summary: 'label messages from stdin, one per line: crisis or ok',
  usage: `Usage: mascot safety classify [--explain] [--rules-only] [--model]

Reads one message per line on stdin and prints one label per line, in order: "crisis" or "ok".
The crisis rules decide first; the lexical classifier (models/safety-lexical.json) adds a crisis
when its score reaches its threshold and no negation, fiction, news, information, hyperbole, past,
accident or play cancellation in the rules vetoes it.
  --explain     print tab-separated: label, category, source, patterns that counted, patterns
                cancelled (with the reason: negated, past, media, ...), the classifier's
                score/threshold (and veto), model answer
  --rules-only  leave the lexical classifier out
  --model    also ask the configured model check (MASCOT_SAFETY_BASE_URL or MASCOT_LLM_BASE_URL, and
             MASCOT_SAFETY_MODEL or MASCOT_LLM_MODEL); it can only add crisis labels
Example:  printf 'I want to kill myself\\nthis traffic is killing me\\n' | mascot safety classify`,
  async run(ctx) {
    const detector = detectorFor(ctx);
    const explained = switchOn(ctx, 'explain');
    const rl = readline.createInterface({ input: ctx.stdin, terminal: false, crlfDelay: Infinity });
    for await (const line of rl) {
      const verdict = detector.mode !== 'off' ? await detector.classify(line) : detector.classifyLocally(line);
      ctx.stdout.write(`${explained ? explain(verdict) : verdict.label}\n`);
    }
    return 0;
  },
};

function percent(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

function report(file: string, e: Evaluation, showMisses: boolean): string {
  const lines = [`${file}: ${e.total} messages (${e.counts.crisis} crisis, ${e.counts.distress} ordinary distress, ${e.counts.other} other)`];
  const ci = (r: { low: number; high: number }) => `95% CI ${r.low.toFixed(3)}-${r.high.toFixed(3)}`;
  lines.push(`  crisis recall:                ${e.recall.value.toFixed(3)} (${e.recall.hits}/${e.recall.of}; ${ci(e.recall)})`);
  lines.push(`  false positives, distress:    ${percent(e.fpDistress.value)} (${e.fpDistress.hits}/${e.fpDistress.of})`);
  lines.push(`  false positives, other:       ${percent(e.fpOther.value)} (${e.fpOther.hits}/${e.fpOther.of})`);
  lines.push(`  false positives, non-crisis:  ${percent(e.fpAll.value)} (${e.fpAll.hits}/${e.fpAll.of})`);
  const byCategory = Object.entries(e.recallByCategory).map(([c, r]) => `${c} ${r.hits}/${r.of}`);
  if (byCategory.length > 0) lines.push(`  recall by category:           ${byCategory.join(', ')}`);
  if (showMisses) {
    for (const m of e.misses) lines.push(`  missed     ${m.category ?? ''}\t${JSON.stringify(m.text)}`);
    for (const f of e.falsePositives) lines.push(`  flagged    ${f.label}\t${JSON.stringify(f.text)}\t(${f.patterns.join(',')})`);
  }
  return lines.join('\n');
}

const evaluateCommand: Command = {
  name: 'safety eval',
  summary: 'crisis recall and false-positive rates on a labelled JSONL set',
  usage: `Usage: mascot safety eval --file F [--file G ...] [--misses] [--json] [--rules-only] [--model] [--min-recall R --max-fp P]

Each line of F is {"text": "...", "label": "crisis" | "distress" | "other"} (an optional "category"
breaks recall down). Prints recall on crisis and the false-positive rates on ordinary distress, on
other messages and on both. Lines that are not valid are reported with their line number and skipped.
  --misses          list every missed crisis and every false positive
  --json            one JSON object per file instead of text
  --rules-only      the rules without the lexical classifier
  --model           also ask the configured model check (see mascot safety classify --help)
  --min-recall R    exit 3 when recall is below R (e.g. 0.95)
  --max-fp P        exit 3 when the distress false-positive rate is P or more (e.g. 0.05)
The sets in datasets/safety/ and what each was used for are described in docs/safety.md.`,
  async run(ctx) {
    const detector = detectorFor(ctx);
    const asJson = switchOn(ctx, 'json');
    const showMisses = switchOn(ctx, 'misses');
    const files = [...ctx.args];
    const flagged = ctx.flags.file;
    if (flagged === true) throw new UsageError('--file needs a path');
    if (typeof flagged === 'string') files.unshift(...flagged.split(','));
    if (files.length === 0) throw new UsageError('name a labelled set with --file');
    const minRecall = numberFlag(ctx.flags, 'min-recall', 0, (n) => n >= 0 && n <= 1);
    const maxFp = numberFlag(ctx.flags, 'max-fp', 1.01, (n) => n >= 0 && n <= 1);
    let problems = 0;
    let missedTarget = false;
    for (const file of files) {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (err) {
        ctx.stderr.write(`mascot safety eval: cannot read ${file}: ${(err as Error).message}\n`);
        problems++;
        continue;
      }
      const set = parseLabelledSet(text, file);
      for (const p of set.problems) ctx.stderr.write(`${p}\n`);
      problems += set.problems.length;
      if (set.examples.length === 0) {
        ctx.stderr.write(`mascot safety eval: ${file} holds no valid examples\n`);
        continue;
      }
      const e = await evaluate(set.examples, (t) => (detector.mode !== 'off' ? detector.classify(t) : detector.classifyLocally(t)));
      missedTarget ||= (e.recall.of > 0 && e.recall.value < minRecall) || (e.fpDistress.of > 0 && e.fpDistress.value >= maxFp);
      ctx.stdout.write(asJson ? `${JSON.stringify({ file, ...e })}\n` : `${report(file, e, showMisses)}\n`);
    }
    if (problems > 0) return 1;
    return missedTarget ? 3 : 0;
  },
};

const patterns: Command = {
  name: 'safety patterns',
  summary: 'list the documented crisis patterns, per language',
  usage: `Usage: mascot safety patterns [--language en]

Prints every crisis pattern: id, category, what it recognises, an example it flags, and what
cancels it (negation, the past, fiction/news, information talk, accidents, play, hyperbole).`,
  async run(ctx) {
    const config = loadConfig(ctx.env);
    const languages = languagesFor(stringFlag(ctx.flags, 'language') ?? config.MASCOT_SAFETY_LANGUAGES, '--language');
    for (const language of languages) {
      ctx.stdout.write(`# ${language.name} (${language.code}): ${language.patterns.length} patterns\n`);
      for (const p of language.patterns) {
        const cancels = [
          p.negatable && 'negation',
          p.timely && 'past',
          'fiction/news',
          p.topic && 'information',
          p.firstPerson && 'not first person',
          p.accidents && 'accident',
          p.play && 'play',
          p.hyperbole && `hyperbole (${p.hyperbole})`,
          p.minor && 'writer not a minor',
        ].filter(Boolean);
        ctx.stdout.write(`${p.id}\t${p.category}\t${p.note}\n    e.g. ${JSON.stringify(p.example)}; cancelled by: ${cancels.join(', ')}\n`);
      }
    }
    return 0;
  },
};

function openSafetyStore(ctx: CommandContext): { store: SafetyStore; close(): void } {
  const config = loadConfig(ctx.env);
  const db = openDatabase(config.MASCOT_DB);
  return { store: new SafetyStore(db), close: () => db.close() };
}

const events: Command = {
  name: 'safety events',
  summary: 'recent crisis events: where, what kind, what was done (never the message text)',
  usage: `Usage: mascot safety events [--limit N] [--platform discord|slack|console]

Lists the newest crisis events from the database (MASCOT_DB): time, channel, category, whether the
calm message was posted and moderators alerted, and until when the personas were quiet.`,
  async run(ctx) {
    const limit = numberFlag(ctx.flags, 'limit', 20, (n) => Number.isInteger(n) && n > 0 && n <= 10_000);
    const { store, close } = openSafetyStore(ctx);
    try {
      const list = store.events(limit, stringFlag(ctx.flags, 'platform'));
      if (list.length === 0) ctx.stdout.write('No crisis events recorded.\n');
      for (const e of list)
        ctx.stdout.write(
          `${new Date(e.at).toISOString()}  ${e.channelKey}  ${e.category} (${e.source}: ${e.patterns.join(',') || 'model'})  ${e.responded ? 'responded' : 'no new message'}, ${e.alerted ? 'alerted' : 'not re-alerted'}, quiet until ${new Date(e.quietUntil).toISOString()}\n`,
        );
      return 0;
    } finally {
      close();
    }
  },
};

const space: Command = {
  name: 'safety space',
  summary: "show or set a server's crisis resources, moderator alert channel and quiet period",
  usage: `Usage: mascot safety space PLATFORM:SPACE [--resources TEXT] [--alert-channel ID] [--quiet-minutes N] [--clear FIELD]

PLATFORM:SPACE is e.g. discord:123456789012345678 (a guild), slack:T0123ABCD (a workspace), or
discord:* for every server of a platform. Without options, prints the effective settings.
  --resources TEXT     crisis lines and who to contact, shown on a crisis (else the pack's resources)
  --alert-channel ID   channel where moderators are alerted (else MASCOT_SAFETY_ALERT_CHANNEL_<PLATFORM>)
  --quiet-minutes N    how long the personas stay quiet after a crisis (else MASCOT_SAFETY_QUIET_MINUTES)
  --clear FIELD        unset resources, alert-channel or quiet-minutes (comma-separated)
  --actor NAME         who made the change (default: cli)`,
  async run(ctx) {
    const target = ctx.args[0];
    const m = target ? /^(discord|slack|console):(\*|[A-Za-z0-9._-]{1,64})$/.exec(target) : null;
    if (!m) throw new UsageError(`name the server as PLATFORM:SPACE, e.g. discord:123456789012345678 or slack:*${target ? ` (got "${target}")` : ''}`);
    const [, platform, spaceId] = m as unknown as [string, string, string];
    const change: Parameters<SafetyStore['setSpaceSettings']>[2] = {};
    const resources = stringFlag(ctx.flags, 'resources');
    if (resources !== undefined) {
      if (resources.trim().length < 10 || resources.length > 1500) throw new UsageError('--resources: give 10 to 1500 characters of crisis lines and contacts');
      change.resources = resources.trim();
    }
    const alertChannel = stringFlag(ctx.flags, 'alert-channel');
    if (alertChannel !== undefined) {
      if (!/^[A-Za-z0-9]{5,30}$/.test(alertChannel)) throw new UsageError(`--alert-channel: "${alertChannel}" is not a channel id`);
      change.alertChannel = alertChannel;
    }
    if (ctx.flags['quiet-minutes'] !== undefined) change.quietMinutes = numberFlag(ctx.flags, 'quiet-minutes', 30, (n) => Number.isInteger(n) && n >= 0 && n <= 1440);
    const fields = { resources: 'resources', 'alert-channel': 'alertChannel', 'quiet-minutes': 'quietMinutes' } as const;
    for (const name of (stringFlag(ctx.flags, 'clear') ?? '').split(',').filter(Boolean)) {
      const field = fields[name.trim() as keyof typeof fields];
      if (!field) throw new UsageError(`--clear: "${name}" is not one of ${Object.keys(fields).join(', ')}`);
      change[field] = null;
    }
    const { store, close } = openSafetyStore(ctx);
    try {
      if (Object.keys(change).length > 0) store.setSpaceSettings(platform, spaceId, change, stringFlag(ctx.flags, 'actor') ?? 'cli');
      const s = store.spaceSettings(platform, spaceId === ALL_SPACES ? undefined : spaceId);
      ctx.stdout.write(
        [
          `${platform}:${spaceId}`,
          `  resources:      ${s.resources ?? "(the channel's pack resources)"}`,
          `  alert channel:  ${s.alertChannel ?? `(MASCOT_SAFETY_ALERT_CHANNEL_${platform.toUpperCase()})`}`,
          `  quiet minutes:  ${s.quietMinutes ?? '(MASCOT_SAFETY_QUIET_MINUTES)'}`,
        ].join('\n') + '\n',
      );
      return 0;
    } finally {
      close();
    }
  },
};

const train: Command = {
  name: 'safety train',
  summary: 'train the lexical crisis classifier on the development sets',
  usage: `Usage: mascot safety train [--out F] [--check]

Trains the lexical crisis classifier (logistic regression over hashed word uni/bi-grams and pooled
word vectors, models/safety-word-vectors.bin) on every datasets/safety/dev*.jsonl file, never on a
held-out set, chooses its threshold by 5-fold cross-validation with whole sets as folds so that
the false positives it adds to the rules out of fold stay at or under 2% on ordinary distress and
0.4% on ordinary messages, and writes the weights (default models/safety-lexical.json). Training
is deterministic.
  --out F    write the weights to F instead
  --check    write nothing; exit 3 when a fresh training differs from the shipped weights`,
  async run(ctx) {
    const check = switchOn(ctx, 'check');
    const out = stringFlag(ctx.flags, 'out') ?? DEFAULT_LEXICAL_MODEL;
    const sets = developmentSetFiles().map((file) => {
      const set = parseLabelledSet(fs.readFileSync(path.join(SAFETY_DATASETS, file), 'utf8'), file);
      if (set.problems.length > 0) throw new UsageError(`fix the development set first:\n${set.problems.join('\n')}`);
      return { file, examples: set.examples };
    });
    const model = trainLexical(sets, { vectors: loadWordVectors(), decides: new CrisisDetector().leavesToClassifier });
    const examples = sets.reduce((n, s) => n + s.examples.length, 0);
    const json = `${JSON.stringify(model)}\n`;
    const cv = model.training.crossValidation;
    const summary = `${examples} examples from ${sets.length} development sets; threshold ${model.threshold} (out-of-fold recall ${cv.recall}, false positives added on distress ${cv.fpDistress}, other ${cv.fpOther}, ordinary ${cv.fpOrdinary}); ${model.weights.length} non-zero weights`;
    if (check) {
      const same = fs.existsSync(out) && fs.readFileSync(out, 'utf8') === json;
      ctx.stdout.write(`${same ? 'identical to' : 'DIFFERS from'} ${out}: ${summary}\n`);
      return same ? 0 : 3;
    }
    fs.writeFileSync(out, json);
    ctx.stdout.write(`wrote ${out}: ${summary}\n`);
    return 0;
  },
};

export default [classify, evaluateCommand, train, patterns, events, space];
