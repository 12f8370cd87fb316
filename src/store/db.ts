// Opens the SQLite database (WAL) and applies `migrations/NNN_name.sql` in order, each in a
// transaction, recorded in a `migrations` table so re-running is a no-op.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

export type Db = Database.Database;

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

export class DatabaseOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseOpenError';
  }
}

/**
 * Open (creating folders as needed) and migrate. Throws DatabaseOpenError with the path on failure.
 * `onMigrated` receives the names of the migrations applied now.
 */
export function openDatabase(file: string, migrationsDir: string = MIGRATIONS_DIR, onMigrated?: (applied: string[]) => void): Db {
  let db: Db;
  try {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    // Creating the migrations table proves the file is writable before anything else runs.
    db.exec('CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  } catch (err) {
    throw new DatabaseOpenError(`cannot open database at ${file} (MASCOT_DB): ${(err as Error).message}`);
  }
  try {
    const applied = migrate(db, migrationsDir);
    onMigrated?.(applied);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

export interface Migration {
  id: number;
  name: string;
  file: string;
}

export function listMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  for (const file of fs.readdirSync(dir).sort()) {
    const m = /^(\d{3})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!m) continue;
    migrations.push({ id: Number(m[1]), name: m[2]!, file: path.join(dir, file) });
  }
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.id === migrations[i - 1]!.id) throw new Error(`two migrations numbered ${migrations[i]!.id} in ${dir}`);
  }
  return migrations;
}

/** Apply pending migrations; returns the names applied now. */
export function migrate(db: Db, dir: string = MIGRATIONS_DIR): string[] {
  const done = new Set(db.prepare('SELECT id FROM migrations').pluck().all() as number[]);
  const applied: string[] = [];
  for (const m of listMigrations(dir)) {
    if (done.has(m.id)) continue;
    const sql = fs.readFileSync(m.file, 'utf8');
    try {
      db.transaction(() => {
        db.exec(sql);
        db.prepare('INSERT INTO migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, Date.now());
      })();
    } catch (err) {
      throw new DatabaseOpenError(`migration ${path.basename(m.file)} failed: ${(err as Error).message}`);
    }
    applied.push(`${String(m.id).padStart(3, '0')}_${m.name}`);
  }
  return applied;
}
