import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DatabaseOpenError, listMigrations, migrate, openDatabase } from '../src/store/db.ts';
import { Store } from '../src/store/store.ts';
import { tempDir } from './support/core.ts';

describe('migrations', () => {
  it('apply in order on a fresh database, are recorded, and re-running is a no-op', () => {
    const file = path.join(tempDir(), 'nested', 'dir', 'mascot.db');
    let applied: string[] = [];
    const db = openDatabase(file, undefined, (names) => (applied = names));
    expect(applied).toEqual(listMigrations().map((m) => `${String(m.id).padStart(3, '0')}_${m.name}`));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(migrate(db)).toEqual([]);
    db.close();
    let again: string[] = ['x'];
    openDatabase(file, undefined, (names) => (again = names)).close();
    expect(again).toEqual([]);
  });

  it('a failing migration rolls back and names its file', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, '001_ok.sql'), 'CREATE TABLE a (x INTEGER);');
    fs.writeFileSync(path.join(dir, '002_broken.sql'), 'CREATE TABLE b (x INTEGER); CREATE TABLE oops (;');
    expect(() => openDatabase(path.join(dir, 'db.sqlite'), dir)).toThrow(/002_broken\.sql/);
    const db = new Database(path.join(dir, 'db.sqlite'));
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('a', 'b')").pluck().all()).toEqual(['a']);
    expect(db.prepare('SELECT name FROM migrations').pluck().all()).toEqual(['ok']);
  });

  it('an unwritable database path fails with a message naming the path', () => {
    const dir = tempDir();
    const blocker = path.join(dir, 'file');
    fs.writeFileSync(blocker, 'not a folder');
    expect(() => openDatabase(path.join(blocker, 'mascot.db'))).toThrow(DatabaseOpenError);
    expect(() => openDatabase(path.join(blocker, 'mascot.db'))).toThrow(/cannot open database at .*file\/mascot\.db/);
  });
});

describe('store', () => {
  const open = () => new Store(openDatabase(path.join(tempDir(), 'm.db')));

  it('keeps an audit trail of persona overrides and rolls back to any version', () => {
    const store = open();
    store.setPersonaOverride('support', 'anchor', '*', 'talkativeness', 0.2, 'mod-a');
    store.setPersonaOverride('support', 'anchor', '*', 'style', 'shorter sentences', 'mod-b');
    store.setPersonaOverride('support', 'anchor', '*', 'talkativeness', 0.9, 'mod-a');
    const history = store.personaHistory('support', 'anchor', '*');
    expect(history.map((h) => [h.version, h.field, h.oldValue, h.newValue, h.actor])).toEqual([
      [1, 'talkativeness', undefined, 0.2, 'mod-a'],
      [2, 'style', undefined, 'shorter sentences', 'mod-b'],
      [3, 'talkativeness', 0.2, 0.9, 'mod-a'],
    ]);
    store.rollbackPersona('support', 'anchor', '*', 1, 'mod-c');
    expect(store.personaOverrides('support', 'anchor', '*')).toEqual({ talkativeness: 0.2 });
    store.rollbackPersona('support', 'anchor', '*', 0, 'mod-c');
    expect(store.personaOverrides('support', 'anchor', '*')).toEqual({});
    expect(store.personaHistory('support', 'anchor', '*').at(-1)!.action).toBe('rollback');
    expect(() => store.rollbackPersona('support', 'anchor', '*', 99, 'mod-c')).toThrow(/between 0 and/);
  });

  it('forgets a person: their messages and feedback go, others stay', () => {
    const store = open();
    const base = { channelKey: 'discord:c', authorName: 'x', isBot: false, text: 'hi', at: 1 };
    store.logMessage({ ...base, platformId: '1', authorId: 'alice' });
    store.logMessage({ ...base, platformId: '2', authorId: 'bob' });
    store.addFeedback({ channelKey: 'discord:c', userId: 'alice', kind: 'reaction', value: 1, at: 1 });
    expect(store.forgetUser('discord', 'alice')).toEqual({ messages: 1, feedback: 1 });
    expect(store.db.prepare('SELECT author_id FROM messages').pluck().all()).toEqual(['bob']);
  });

  it('never throws from a failing log write', () => {
    const errors: string[] = [];
    const store = new Store(openDatabase(path.join(tempDir(), 'm.db')), (what) => errors.push(what));
    store.db.exec('DROP TABLE messages');
    expect(store.safely('message', () => store.db.prepare('INSERT INTO messages DEFAULT VALUES').run())).toBeUndefined();
    expect(errors).toEqual(['message']);
  });
});
