// The background writer of realm exports (Zulip's deferred_work queue for realm_export): owned by
// the composition root (app.ts), started after the listeners and stopped before the store closes.
// POST /export/realm records a requested row and kicks it; the worker takes requested rows one at a
// time, writes the tarball in a temporary directory, stores it in the file store under
// `exports/<realm id>/<random>/zulip-export-<random>.tar.gz`, and records success or failure, each
// end announced to the realm's administrators (realm_export). A row a crash left started is
// requested again at the next start.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Database } from '../../platform/db/database.js';
import type { FileStore } from '../../platform/files/file-store.js';
import type { Logger } from '../../platform/log.js';
import type { Clock } from '../../platform/clock.js';
import type { ChatTables, Realm } from '../tables.js';
import type { EventHub } from '../events/hub.js';
import { EXPORT_KEY_PREFIX, EXPORT_STATUS, realmExportNotice } from '../domain/realm-exports.js';
import { packExport, writeRealmExport } from './write.js';

export interface ExportWorkerDeps {
  db: Database<ChatTables>;
  clock: Clock;
  log: Logger;
  events: EventHub;
  files: FileStore;
  realmUrl(realm: Realm): string;
}

export interface ExportWorkerOptions {
  /** How often requested rows are looked for besides kicks (0: only when a test calls runDue()). */
  tickMs: number;
  /** Where tarballs are staged before the file store takes them (default: the system's temporary directory). */
  tempDir?: string;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomName = (n: number) => Array.from(randomBytes(n), (b) => ALPHABET[b % ALPHABET.length]).join('');

export class ExportWorker {
  private readonly deps: ExportWorkerDeps;
  private readonly options: ExportWorkerOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;
  private started = false;
  private stopping = false;

  constructor(deps: ExportWorkerDeps, options: Partial<ExportWorkerOptions> = {}) {
    this.deps = deps;
    this.options = { tickMs: 10_000, ...options };
  }

  /** Takes back rows an earlier process left started, then runs what is requested (and every tickMs). */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.deps.db.kysely
      .updateTable('realm_exports')
      .set({ status: EXPORT_STATUS.requested, date_started: null })
      .where('status', '=', EXPORT_STATUS.started)
      .execute()
      .then(() => this.kick())
      .catch((err: Error) => this.deps.log.error('realm exports could not be resumed', { error: err.stack }));
    if (this.options.tickMs > 0) {
      this.timer = setInterval(() => this.kick(), this.options.tickMs);
      this.timer.unref();
    }
  }

  /** A new export was requested: run soon (when started; tests call runDue()). */
  kick(): void {
    if (!this.started) return;
    void this.runDue().catch((err: Error) => this.deps.log.error('realm export run failed', { error: err.stack }));
  }

  /** Writes every requested export, one after another; resolves with how many ended (succeeded or failed). */
  runDue(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = (async () => {
      let done = 0;
      do {
        this.again = false;
        for (;;) {
          const row = await this.deps.db.kysely.selectFrom('realm_exports').selectAll().where('status', '=', EXPORT_STATUS.requested).orderBy('id').limit(1).executeTakeFirst();
          if (!row) break;
          await this.runOne(row.id, row.realm_id, row.type);
          done++;
          if (this.stopping) break;
        }
      } while (this.again && !this.stopping);
      return done;
    })();
    this.running = run.finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops the timer and waits for the export being written. */
  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  private async runOne(id: number, realmId: number, type: number): Promise<void> {
    const { db, clock, log, files } = this.deps;
    const claimed = await db.kysely
      .updateTable('realm_exports')
      .set({ status: EXPORT_STATUS.started, date_started: clock.now() })
      .where('id', '=', id)
      .where('status', '=', EXPORT_STATUS.requested)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) return;
    const name = `zulip-export-${randomName(8)}`;
    const key = `${EXPORT_KEY_PREFIX}/${realmId}/${randomName(24)}/${name}.tar.gz`;
    let staging: string | undefined;
    try {
      staging = await fsp.mkdtemp(path.join(this.options.tempDir ?? os.tmpdir(), 'keel-export-'));
      const summary = await writeRealmExport({ db, files, clock }, realmId, type, path.join(staging, name));
      const tarball = path.join(staging, `${name}.tar.gz`);
      await packExport(path.join(staging, name), tarball);
      const sha = createHash('sha256');
      for await (const chunk of createReadStream(tarball)) sha.update(chunk as Buffer);
      const stored = await files.put(key, createReadStream(tarball));
      await this.finish(id, realmId, { status: EXPORT_STATUS.succeeded, date_succeeded: clock.now(), export_path: key, sha256sum_hex: sha.digest('hex'), tarball_size_bytes: stored.size });
      log.info('realm export written', { id, realmId, key, bytes: stored.size, ...summary });
    } catch (err) {
      log.error('realm export failed', { id, realmId, error: (err as Error).stack });
      await files.delete(key).catch(() => {});
      await this.finish(id, realmId, { status: EXPORT_STATUS.failed, date_failed: clock.now() });
    } finally {
      if (staging) await fsp.rm(staging, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** Records how an export ended (unless it was deleted meanwhile) and tells the administrators. */
  private async finish(id: number, realmId: number, set: Record<string, unknown>): Promise<void> {
    const { db, events } = this.deps;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          await trx.updateTable('realm_exports').set(set).where('id', '=', id).where('status', '=', EXPORT_STATUS.started).execute();
          return trx.selectFrom('realms').selectAll().where('id', '=', realmId).executeTakeFirstOrThrow();
        }),
      (realm) => realmExportNotice(db.kysely, realm, this.deps.realmUrl(realm)),
    );
  }
}
