// Crash safety with real processes: SIGKILL at random moments (and right inside a post's network
// round trip), restart on the same SQLite file, and check that every accepted human message and
// every bot turn people could see is in the database, and that no human message got two rounds.
// SIGTERM finishes or cancels the running round and closes the database cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRng } from '../src/util/rng.ts';
import { tempDir } from './support/core.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const MESSAGES = [
  'I moved to a new city and I feel lonely',
  'work has been overwhelming this month',
  'my sister has not called me back',
  'I keep replaying an argument with my friend',
  'I am nervous about my exam on Friday',
  'my landlord ignores my emails',
  'I could not sleep last night',
  'I miss my old team',
  'I think I need a break',
  'I am proud I went for a run today',
  'my manager praised my report',
  'I want to plan my week better',
  'I feel a bit calmer now',
  'thank you for listening',
];

interface Run {
  child: ChildProcess;
  lines: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once a line satisfying the predicate was printed. */
  waitFor(test: (line: string) => boolean): Promise<void>;
}

function start(args: string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { test: (l: string) => boolean; resolve: () => void }[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const l of parts) {
      lines.push(l);
      for (const w of waiters.filter((w) => w.test(l))) {
        w.resolve();
        waiters.splice(waiters.indexOf(w), 1);
      }
    }
  });
  child.stderr!.on('data', () => {});
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    lines,
    exit,
    waitFor: (test) => (lines.some(test) ? Promise.resolve() : new Promise((resolve) => waiters.push({ test, resolve }))),
  };
}

function baseEnv(dir: string): Record<string, string> {
  return {
    MASCOT_DB: path.join(dir, 'mascot.db'),
    MASCOT_PACING_MS: '0',
    MASCOT_LOG_LEVEL: 'silent',
    MASCOT_REWARD_MODELS: 'off',
    MASCOT_DIRECTOR_DIR: path.join(dir, 'directors'),
  };
}

function openDb(dir: string) {
  const db = new Database(path.join(dir, 'mascot.db'));
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  return db;
}

describe('crash safety', () => {
  it('an engine killed at random moments, also mid-post, loses no accepted message or visible turn and never runs a round twice', async () => {
    const dir = tempDir('mascot-crash-');
    const env = baseEnv(dir);
    const rng = createRng(20_240_601);
    const input = MESSAGES.map((t, i) => `m${i + 1}\t${t}\n`).join('');
    const visible: { id: string; persona: string; text: string }[] = [];
    const accepted = new Set<string>();
    let midPostKills = 0;

    for (let r = 0; r < 6; r++) {
      const run = start(['--import', 'tsx', 'tests/crash-child.ts'], env);
      run.child.stdin!.end(input); // the platform delivers (after a restart: redelivers) everything
      await run.waitFor((l) => l.startsWith('ACCEPTED') || l === 'DONE');
      if (r % 2 === 1) {
        // Right after a turn became visible, before the platform acknowledged it.
        const nth = 1 + Math.floor(rng.next() * 3);
        await Promise.race([run.waitFor((l) => run.lines.filter((x) => x.startsWith('VISIBLE')).length >= nth && l.startsWith('VISIBLE')), run.exit]);
        midPostKills++;
      } else await new Promise((resolve) => setTimeout(resolve, 50 + rng.next() * 600));
      run.child.kill('SIGKILL');
      await run.exit;
      for (const l of run.lines) {
        const [kind, id, persona, text] = l.split('\t');
        if (kind === 'VISIBLE') visible.push({ id: id!, persona: persona!, text: JSON.parse(text!) as string });
        if (kind === 'ACCEPTED') accepted.add(id!);
      }
      openDb(dir).close(); // opens after every kill, and passes the integrity check
    }

    // A last run without a kill takes whatever was never accepted.
    const last = start(['--import', 'tsx', 'tests/crash-child.ts'], env);
    last.child.stdin!.end(input);
    expect((await last.exit).code).toBe(0);
    expect(last.lines.at(-1)).toBe('DONE');
    for (const l of last.lines) {
      const [kind, id, persona, text] = l.split('\t');
      if (kind === 'VISIBLE') visible.push({ id: id!, persona: persona!, text: JSON.parse(text!) as string });
    }

    const db = openDb(dir);
    try {
      // Every message is accepted exactly once, whatever was redelivered.
      const humans = db.prepare('SELECT platform_id FROM messages WHERE is_bot = 0 ORDER BY id').pluck().all() as string[];
      expect([...humans].sort()).toEqual(MESSAGES.map((_, i) => `m${i + 1}`).sort());
      for (const id of accepted) expect(humans).toContain(id);
      // Every turn people could see is in the log: posted with its platform id, or pending when killed before the acknowledgement.
      const posted = db.prepare("SELECT 1 FROM messages WHERE is_bot = 1 AND platform_id = ? AND delivery = 'posted'").pluck();
      const pending = db.prepare("SELECT 1 FROM messages WHERE is_bot = 1 AND delivery = 'pending' AND persona_id = ? AND text = ?").pluck();
      for (const v of visible) expect(posted.get(v.id) === 1 || pending.get(v.persona, v.text) === 1, `${v.id} ${v.text}`).toBe(true);
      expect(midPostKills).toBeGreaterThan(0);
      expect(db.prepare("SELECT COUNT(*) FROM messages WHERE delivery = 'pending'").pluck().get()).toBeGreaterThan(0);
      // No human message ever got a second round.
      expect(db.prepare('SELECT trigger_id FROM decisions GROUP BY trigger_id HAVING COUNT(DISTINCT round_id) > 1').all()).toEqual([]);
      // And no turn was logged twice.
      expect(db.prepare('SELECT round_id, text FROM messages WHERE is_bot = 1 GROUP BY round_id, text HAVING COUNT(*) > 1').all()).toEqual([]);
    } finally {
      db.close();
    }
  }, 60_000);

  it('mascot chat killed and restarted keeps every printed turn and every message before it, in order', async () => {
    const dir = tempDir('mascot-chat-crash-');
    const env = baseEnv(dir);
    const rng = createRng(7);
    for (let r = 0; r < 2; r++) {
      const run = start(['bin/mascot.js', 'chat'], env);
      run.child.stdin!.end(MESSAGES.map((m) => `${m}\n`).join(''));
      await Promise.race([run.waitFor((l) => l.includes('[offline voice]')), run.exit]);
      await new Promise((resolve) => setTimeout(resolve, rng.next() * 400));
      run.child.kill('SIGKILL');
      await run.exit;

      const db = openDb(dir);
      try {
        const channel = db.prepare('SELECT key FROM channels ORDER BY created_at DESC, rowid DESC LIMIT 1').pluck().get() as string;
        const rows = db.prepare('SELECT author_name AS name, is_bot AS bot, text FROM messages WHERE channel_key = ? ORDER BY id').all(channel) as { name: string; bot: number; text: string }[];
        const humans = rows.filter((x) => x.bot === 0).map((x) => x.text);
        expect(humans).toEqual(MESSAGES.slice(0, humans.length)); // a prefix: nothing accepted is lost
        const bots = new Set(rows.filter((x) => x.bot === 1).map((x) => `${x.name}: ${x.text.replace(/\s*\n+\s*/g, ' ')} [offline voice]`));
        const printed = run.lines.filter((l) => l.endsWith('[offline voice]'));
        expect(printed.length).toBeGreaterThan(0);
        for (const line of printed) expect(bots.has(line), line).toBe(true);
      } finally {
        db.close();
      }
    }
  }, 60_000);

  it('SIGTERM cancels the running round, exits 0 and closes the database cleanly', async () => {
    const dir = tempDir('mascot-term-');
    const env = baseEnv(dir);
    const run = start(['bin/mascot.js', 'chat'], env);
    run.child.stdin!.write(MESSAGES.map((m) => `${m}\n`).join('')); // input stays open: the process would wait for more
    await run.waitFor((l) => l.includes('[offline voice]'));
    run.child.kill('SIGTERM');
    const exit = await run.exit;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(fs.existsSync(path.join(dir, 'mascot.db-wal'))).toBe(false); // the last connection closed and checkpointed
    const db = openDb(dir);
    try {
      expect(db.prepare("SELECT COUNT(*) FROM messages WHERE delivery = 'pending'").pluck().get()).toBe(0);
      const printed = run.lines.filter((l) => l.endsWith('[offline voice]')).length;
      expect(db.prepare('SELECT COUNT(*) FROM messages WHERE is_bot = 1').pluck().get()).toBe(printed);
      expect(db.prepare('SELECT COUNT(*) FROM messages WHERE is_bot = 0').pluck().get()).toBeLessThan(MESSAGES.length);
    } finally {
      db.close();
    }
  }, 30_000);
});
