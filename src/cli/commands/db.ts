// `mascot db migrate`: apply pending migrations to MASCOT_DB (start-up does this too).
import { loadConfig } from '../../config.ts';
import { listMigrations, openDatabase } from '../../store/db.ts';
import type { Command } from '../command.ts';

const migrateCommand: Command = {
  name: 'db migrate',
  summary: 'create or upgrade the SQLite database at MASCOT_DB',
  usage: `Usage: mascot db migrate

Applies migrations/NNN_name.sql in order, each in a transaction; running it again is a no-op.`,
  async run(ctx) {
    const config = loadConfig(ctx.env);
    let applied: string[] = [];
    const db = openDatabase(config.MASCOT_DB, undefined, (names) => (applied = names));
    db.close();
    const total = listMigrations().length;
    ctx.stdout.write(applied.length ? `applied ${applied.join(', ')}; ${total} migration(s) in ${config.MASCOT_DB}\n` : `up to date: ${total} migration(s) in ${config.MASCOT_DB}\n`);
    return 0;
  },
};

export default migrateCommand;
