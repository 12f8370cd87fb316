// The registry of learned director versions: registered ONNX files (copied into a versions folder
// and checked by hash when loaded), and per pack which one is active. Activation history is an
// audit trail replayed as a stack: promote and force push a version, rollback pops back to the
// version active before. Processes notice a change by polling `changeMark()`.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readDirectorFile, type DirectorModelInfo } from '../learn/director-model.ts';
import { saveModel } from '../learn/onnx.ts';
import type { Db } from '../store/db.ts';

export interface DirectorVersion {
  pack: string;
  version: string;
  file: string;
  sha256: string;
  source: string;
  registeredAt: number;
}

export type ActivationAction = 'promote' | 'force' | 'rollback';

export interface Activation {
  id: number;
  pack: string;
  version: string | null;
  previous: string | null;
  action: ActivationAction;
  actor: string;
  reason: string;
  evidence: unknown;
  at: number;
}

export class VersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VersionError';
  }
}

export class DirectorVersions {
  constructor(
    private readonly db: Db,
    /** Folder registered model files are copied to (MASCOT_DIRECTOR_DIR). */
    readonly dir: string,
  ) {}

  /**
   * Copy a director file into the versions folder and record it. Registering the same file again
   * is a no-op; another file with the same pack and version is refused (versions are immutable).
   */
  register(source: string): { version: DirectorVersion; info: DirectorModelInfo; created: boolean } {
    const { bytes, info } = readDirectorFile(source);
    const sha256 = sha256Of(bytes);
    const existing = this.get(info.pack, info.policyVersion);
    if (existing) {
      if (existing.sha256 !== sha256)
        throw new VersionError(`${source}: version "${info.policyVersion}" of pack "${info.pack}" is already registered with different weights; give the new model another version (mascot train director --version)`);
      return { version: existing, info, created: false };
    }
    const file = path.join(this.dir, info.pack, `${safeName(info.policyVersion)}.onnx`);
    saveModel(file, bytes);
    const row = { pack: info.pack, version: info.policyVersion, file, sha256, source: path.resolve(source), registeredAt: Date.now() };
    this.db
      .prepare('INSERT INTO director_versions (pack, version, file, sha256, source, registered_at) VALUES (@pack, @version, @file, @sha256, @source, @registeredAt)')
      .run(row);
    return { version: row, info, created: true };
  }

  get(pack: string, version: string): DirectorVersion | undefined {
    return this.db
      .prepare('SELECT pack, version, file, sha256, source, registered_at AS registeredAt FROM director_versions WHERE pack = ? AND version = ?')
      .get(pack, version) as DirectorVersion | undefined;
  }

  list(pack?: string): DirectorVersion[] {
    return this.db
      .prepare(
        `SELECT pack, version, file, sha256, source, registered_at AS registeredAt FROM director_versions
         WHERE (? IS NULL OR pack = ?) ORDER BY pack, id`,
      )
      .all(pack ?? null, pack ?? null) as DirectorVersion[];
  }

  /** Read a registered version's bytes, refusing a file changed since registration. */
  read(v: DirectorVersion): Uint8Array {
    let bytes: Uint8Array;
    try {
      bytes = fs.readFileSync(v.file);
    } catch (err) {
      throw new VersionError(`director ${v.pack}/${v.version}: its file ${v.file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (sha256Of(bytes) !== v.sha256) throw new VersionError(`director ${v.pack}/${v.version}: ${v.file} changed since it was registered (sha256 mismatch); register the file again under a new version`);
    return bytes;
  }

  history(pack: string): Activation[] {
    const rows = this.db
      .prepare('SELECT id, pack, version, previous, action, actor, reason, evidence_json AS evidence, at FROM director_activations WHERE pack = ? ORDER BY id')
      .all(pack) as (Omit<Activation, 'evidence'> & { evidence: string | null })[];
    return rows.map((r) => ({ ...r, evidence: r.evidence === null ? null : (JSON.parse(r.evidence) as unknown) }));
  }

  /** The stack of activations of a pack, oldest first; the last entry is active. */
  stack(pack: string): string[] {
    const stack: string[] = [];
    for (const a of this.history(pack)) {
      if (a.action === 'rollback') stack.pop();
      else if (a.version !== null) stack.push(a.version);
    }
    return stack;
  }

  active(pack: string): DirectorVersion | undefined {
    const top = this.stack(pack).at(-1);
    return top === undefined ? undefined : this.get(pack, top);
  }

  /** Make a registered version active. The caller has checked the evidence (or was told to force). */
  activate(v: DirectorVersion, action: 'promote' | 'force', actor: string, reason: string, evidence?: unknown): Activation {
    return this.db.transaction(() => {
      const previous = this.active(v.pack)?.version ?? null;
      if (previous === v.version) throw new VersionError(`director ${v.pack}/${v.version} is already active`);
      return this.record(v.pack, v.version, previous, action, actor, reason, evidence);
    })();
  }

  /** Return a pack to the version active before the current one (or to none). */
  rollback(pack: string, actor: string, reason: string): Activation {
    return this.db.transaction(() => {
      const stack = this.stack(pack);
      if (stack.length === 0) throw new VersionError(`pack "${pack}" has no promoted director to roll back`);
      const previous = stack.at(-1)!;
      const next = stack.at(-2) ?? null;
      return this.record(pack, next, previous, 'rollback', actor, reason);
    })();
  }

  /** Changes whenever any activation is recorded (cheap to poll). */
  changeMark(): number {
    return (this.db.prepare('SELECT COALESCE(MAX(id), 0) FROM director_activations').pluck().get() as number) ?? 0;
  }

  private record(pack: string, version: string | null, previous: string | null, action: ActivationAction, actor: string, reason: string, evidence?: unknown): Activation {
    const at = Date.now();
    const info = this.db
      .prepare('INSERT INTO director_activations (pack, version, previous, action, actor, reason, evidence_json, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(pack, version, previous, action, actor, reason, evidence === undefined ? null : JSON.stringify(evidence), at);
    return { id: Number(info.lastInsertRowid), pack, version, previous, action, actor, reason, evidence: evidence ?? null, at };
  }
}

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function safeName(version: string): string {
  return version.replace(/[^A-Za-z0-9._-]/g, '_');
}
