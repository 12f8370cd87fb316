// Child process of tests/crash.test.ts: the real runtime (engine, offline voice, SQLite file from
// MASCOT_DB) behind an outlet that behaves like a chat platform: a turn becomes visible first
// (printed as "VISIBLE\t<platform id>\t<persona>\t<json text>") and the platform acknowledges it
// with its id only after a network round trip. Input lines are "<message id>\t<text>", as a
// platform delivers (and, after a restart, redelivers) them; each is printed "ACCEPTED\t<id>" once
// the engine has taken it.
import readline from 'node:readline';
import { loadConfig } from '../src/config.ts';
import { silentLogger } from '../src/log.ts';
import type { Outlet } from '../src/platform/platform.ts';
import { createRuntime } from '../src/runtime.ts';
import { sleep } from '../src/util/sleep.ts';

const ACK_MS = 25;
const runtime = createRuntime(loadConfig(process.env), silentLogger());
let posted = 0;
const outlet: Outlet = {
  async post(persona, text) {
    const id = `p${process.pid}-${++posted}`;
    process.stdout.write(`VISIBLE\t${id}\t${persona.id}\t${JSON.stringify(text)}\n`);
    await sleep(ACK_MS);
    return { messageId: id };
  },
  async notice(text) {
    process.stdout.write(`NOTICE\t${JSON.stringify(text)}\n`);
  },
};

process.once('SIGTERM', () => {
  runtime.engine.cancelAll('shutdown');
  rl.close();
});

const rl = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of rl) {
  const [id, text] = line.split('\t') as [string, string];
  const round = runtime.engine.receive(
    { platform: 'slack', channelId: 'C-crash', messageId: id, author: { id: 'U1', name: 'Sam', isBot: false }, text, mentions: [], at: Date.now(), addressed: true },
    outlet,
  );
  process.stdout.write(`ACCEPTED\t${id}\n`);
  await round;
}
await runtime.engine.idle();
runtime.close();
process.stdout.write('DONE\n');
