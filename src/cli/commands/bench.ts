// `mascot bench` (npm run bench): performance figures as medians and ratios from one run.
import os from 'node:os';
import { sections } from '../../bench/sections.ts';
import type { Command } from '../command.ts';

const bench: Command = {
  name: 'bench',
  summary: 'measure decision latency, throughput, memory and training speed',
  usage: `Usage: mascot bench [--quick] [--only NAME[,NAME]]

Runs every benchmark section (${sections.map((s) => s.name).join(', ')}) and prints its figures.
--quick shrinks the workloads (a smoke run); --only runs the named sections.`,
  async run(ctx) {
    const only = typeof ctx.flags.only === 'string' ? ctx.flags.only.split(',') : undefined;
    const unknown = only?.filter((n) => !sections.some((s) => s.name === n)) ?? [];
    if (unknown.length > 0) {
      ctx.stderr.write(`mascot bench: unknown section(s) ${unknown.join(', ')}; known: ${sections.map((s) => s.name).join(', ')}\n`);
      return 2;
    }
    ctx.stdout.write(`mascot bench on node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}), ${new Date().toISOString()}\n`);
    for (const section of sections) {
      if (only && !only.includes(section.name)) continue;
      ctx.stdout.write(`\n## ${section.name}\n`);
      const rows = await section.run({ quick: ctx.flags.quick === true });
      const width = Math.max(...rows.map((r) => r.metric.length));
      for (const row of rows) ctx.stdout.write(`  ${row.metric.padEnd(width)}  ${row.value}\n`);
    }
    return 0;
  },
};

export default bench;
