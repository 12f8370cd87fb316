// `mascot safety ...` through the real command line entry (main), with real files and databases.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli.ts';
import { tempDir } from './support/core.ts';
import { lastUserText, startOpenAIServer } from './support/openai-server.ts';

async function run(argv: string[], input = '', env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const stdin = new PassThrough();
  stdin.end(input);
  const code = await main(argv, {
    stdin,
    stdout: new PassThrough().on('data', (d: Buffer) => (stdout += d.toString())),
    stderr: new PassThrough().on('data', (d: Buffer) => (stderr += d.toString())),
    env: { MASCOT_LOG_LEVEL: 'silent', ...env },
  });
  return { code, stdout, stderr };
}

describe('mascot safety classify', () => {
  it('prints one label per input line, in order, empty lines included', async () => {
    const input = ['I want to kill myself', 'this traffic is killing me', '', 'my husband beats me', 'I used to self harm but I am 3 years clean'].join('\n');
    const r = await run(['safety', 'classify'], `${input}\n`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('crisis\nok\nok\ncrisis\nok\n');
  });

  it('--explain shows category, patterns and why others were cancelled', async () => {
    const r = await run(['safety', 'classify', '--explain'], "I'm not suicidal\nI want to die\n");
    const [first, second] = r.stdout.trim().split('\n');
    expect(first).toMatch(/^ok\t-\trules\t-\tsuicide\.suicidal\(negated\)\tlexical:0\.\d{3}\/0\.\d{3}\(vetoed: negated\)$/);
    expect(second).toMatch(/^crisis\tsuicide\trules\t\S*suicide\.want-to-die/);
  });
});

describe('mascot safety eval', () => {
  it('reports recall and false-positive rates with intervals, and exits 3 below the asked targets', async () => {
    const file = path.resolve(import.meta.dirname, '../datasets/safety/dev-h.jsonl');
    const r = await run(['safety', 'eval', '--rules-only', '--file', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/240 messages \(100 crisis, 80 ordinary distress, 60 other\)/);
    expect(r.stdout).toMatch(/crisis recall: +0\.460 \(46\/100; 95% CI 0\.366-0\.557\)/);
    expect(r.stdout).toMatch(/false positives, distress: +0\.0% \(0\/80\)/);
    const strict = await run(['safety', 'eval', '--rules-only', '--file', file, '--min-recall', '0.95', '--max-fp', '0.05']);
    expect(strict.code).toBe(3);
    const json = await run(['safety', 'eval', '--rules-only', '--json', file]);
    expect(JSON.parse(json.stdout)).toMatchObject({ total: 240, recall: { hits: 46, of: 100 } });
    // With the lexical classifier (trained on dev-h among the others, so this is training data).
    const both = await run(['safety', 'eval', '--json', file]);
    expect(JSON.parse(both.stdout).recall.hits).toBeGreaterThan(45);
  });

  it('reports every bad line with its number, keeps evaluating the good ones, and exits 1', async () => {
    const file = path.join(tempDir(), 'set.jsonl');
    fs.writeFileSync(
      file,
      [
        '{"text": "I want to kill myself", "label": "crisis"}',
        'not json at all',
        '{"text": "", "label": "crisis"}',
        '{"text": "hello", "label": "happy"}',
        '[1, 2]',
        `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
        '{"text": "I had a rough day", "label": "distress"}',
        '',
      ].join('\n'),
    );
    const r = await run(['safety', 'eval', '--file', file, '--misses']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:2: not valid JSON`);
    expect(r.stderr).toContain(`${file}:3: "text" must be a non-empty string`);
    expect(r.stderr).toContain(`${file}:4: "label" must be one of crisis, distress, other (got "happy")`);
    expect(r.stderr).toContain(`${file}:5: expected an object`);
    expect(r.stderr).toContain(`${file}:6:`);
    expect(r.stdout).toMatch(/2 messages \(1 crisis, 1 ordinary distress, 0 other\)/);
    expect(r.stdout).toMatch(/crisis recall: +1\.000 \(1\/1/);
  });

  it('usage errors name what is missing', async () => {
    expect((await run(['safety', 'eval'])).stderr).toMatch(/name a labelled set with --file/);
    const missing = await run(['safety', 'eval', '--file', '/nonexistent/set.jsonl']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read \/nonexistent\/set\.jsonl/);
  });
});

describe('mascot safety patterns, space and events', () => {
  it('lists the documented patterns', async () => {
    const r = await run(['safety', 'patterns']);
    expect(r.stdout).toMatch(/^# English \(en\): \d+ patterns/);
    expect(r.stdout).toContain('suicide.kill-self\tsuicide\t');
    expect(r.stdout).toMatch(/cancelled by: negation, past, fiction\/news/);
  });

  it("sets, shows and clears a server's settings; events lists nothing yet", async () => {
    const env = { MASCOT_DB: path.join(tempDir(), 'cli.db') };
    const set = await run(['safety', 'space', 'discord:123456789', '--resources', 'Call the Example Line: 0800 000 000', '--alert-channel', '987654321', '--quiet-minutes', '45'], '', env);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('resources:      Call the Example Line: 0800 000 000');
    expect(set.stdout).toContain('alert channel:  987654321');
    expect(set.stdout).toContain('quiet minutes:  45');
    const cleared = await run(['safety', 'space', 'discord:123456789', '--clear', 'alert-channel,quiet-minutes'], '', env);
    expect(cleared.stdout).toContain('alert channel:  (MASCOT_SAFETY_ALERT_CHANNEL_DISCORD)');
    expect(cleared.stdout).toContain('Example Line');
    const bad = await run(['safety', 'space', 'discord', '--resources', 'x'], '', env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/name the server as PLATFORM:SPACE/);
    const badField = await run(['safety', 'space', 'slack:T1', '--clear', 'colour'], '', env);
    expect(badField.stderr).toMatch(/--clear: "colour" is not one of resources, alert-channel, quiet-minutes/);
    expect((await run(['safety', 'events'], '', env)).stdout).toBe('No crisis events recorded.\n');
  });
});

describe('--model: the configured model check', () => {
  it('uses the endpoint from the environment, and without one names the variables', async () => {
    const server = await startOpenAIServer((body) => (lastUserText(body).includes('tonight is the night') ? 'crisis' : 'ok'));
    try {
      const env = { MASCOT_LLM_BASE_URL: server.url, MASCOT_SAFETY_MODEL: 'guard-1' };
      const r = await run(['safety', 'classify', '--model'], 'tonight is the night. thank you all for everything\nwho wants lunch?\n', env);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('crisis\nok\n');
    } finally {
      await server.close();
    }
    const missing = await run(['safety', 'classify', '--model'], 'hello\n');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/needs MASCOT_SAFETY_BASE_URL or MASCOT_LLM_BASE_URL/);
  });
});
