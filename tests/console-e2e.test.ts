import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { offlineEnv, runCli } from './support/cli.ts';
import { tempDir } from './support/core.ts';

describe('console companion through the real entry point', () => {
  it('answers a piped conversation with distinct personas, labelled offline, and logs it', async () => {
    const db = path.join(tempDir(), 'data', 'mascot.db');
    const input = ['I moved abroad and feel so alone since my husband travels for work', '', 'I think I miss having friends nearby the most', 'What could I do this week?'].join('\n');
    const res = await runCli(['start'], { input: `${input}\n`, env: offlineEnv({ MASCOT_DB: db }) });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);

    const lines = res.stdout.trim().split('\n');
    const turns = lines.map((l) => /^(Anchor|Catalyst|Beacon|Guide): (.+) \[offline voice\]$/.exec(l)).filter((m) => m !== null);
    expect(turns.length).toBe(lines.length);
    expect(turns.length).toBeGreaterThanOrEqual(3);
    expect(new Set(turns.map((m) => m[1])).size).toBeGreaterThanOrEqual(3);
    // No persona echoes another: every turn's text is different.
    expect(new Set(turns.map((m) => m[2])).size).toBe(turns.length);

    const sqlite = new Database(db, { readonly: true });
    const humans = sqlite.prepare('SELECT text FROM messages WHERE is_bot = 0 ORDER BY id').pluck().all();
    expect(humans).toEqual(input.split('\n').filter((l) => l.trim()));
    expect(sqlite.prepare('SELECT COUNT(*) FROM messages WHERE is_bot = 1 AND offline_voice = 1').pluck().get()).toBe(turns.length);
    const decisions = sqlite.prepare('SELECT COUNT(*) FROM decisions').pluck().get() as number;
    expect(decisions).toBeGreaterThanOrEqual(turns.length);
    sqlite.close();
  });

  it('shows the director with /explain and switches pack with /pack', async () => {
    const db = path.join(tempDir(), 'mascot.db');
    const res = await runCli(['chat'], { input: '/explain\nWe need to decide on the launch date\n/pack meeting\nWe need to decide on the launch date\n/pack nope\n', env: offlineEnv({ MASCOT_DB: db }) });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/\[director heuristic\] \S+ p=0\.\d\d \|/);
    expect(res.stdout).toMatch(/^(Facilitator|Skeptic|Scribe|Planner): /m);
    expect(res.stdout).toMatch(/pack must be one of: meeting, support/);
  });

  it('fails start-up clearly on an unwritable database path, without a stack trace', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'file'), 'x');
    const res = await runCli(['start'], { input: 'hello\n', env: offlineEnv({ MASCOT_DB: path.join(dir, 'file', 'mascot.db') }) });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot open database at .*file\/mascot\.db \(MASCOT_DB\)/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it('fails start-up clearly on a bad configuration value', async () => {
    const res = await runCli(['start'], { env: offlineEnv({ MASCOT_ON_MODEL_FAILURE: 'maybe', MASCOT_DB: path.join(tempDir(), 'm.db') }) });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/MASCOT_ON_MODEL_FAILURE/);
  });
});

describe('mascot CLI', () => {
  it('prints help listing the commands', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    for (const c of ['start', 'chat', 'personas validate', 'db migrate', 'bench']) expect(res.stdout).toContain(`  ${c}`);
  });

  it('validates persona folders, naming file and field', async () => {
    const ok = await runCli(['personas', 'validate']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok {2}support: anchor/m);

    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'p'));
    fs.writeFileSync(path.join(dir, 'p', 'pack.yaml'), 'id: p\nname: P\ndescription: d\nstrategies:\n  listen: { label: L, phase: explore, instruction: Listen. }\nsafety: { resources: call someone }\n');
    fs.writeFileSync(path.join(dir, 'p', 'bob.yaml'), 'id: bob\ndisplayName: Bob\nrole: r\ndescription: d\nvoice: [calm]\nstrategies: [listen]\ntalkativeness: 3\n');
    fs.writeFileSync(path.join(dir, 'p', 'amy.yaml'), 'id: amy\ndisplayName: Amy\nrole: r\ndescription: d\nvoice: [calm]\nstrategies: [listen, shout]\n');
    const bad = await runCli(['personas', 'validate', dir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/bob\.yaml: talkativeness: .*1/);
    expect(bad.stderr).toMatch(/amy\.yaml: strategies\.1: "shout" is not a strategy of pack "p"/);
  });

  it('migrates a database and is a no-op the second time', async () => {
    const env = offlineEnv({ MASCOT_DB: path.join(tempDir(), 'm.db') });
    const first = await runCli(['db', 'migrate'], { env });
    expect(first.stdout).toMatch(/^applied 001_init/);
    const second = await runCli(['db', 'migrate'], { env });
    expect(second.stdout).toMatch(/^up to date/);
  });

  it('rejects an unknown command with exit code 2', async () => {
    const res = await runCli(['fly']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown command "fly"');
  });
});
