// The outbox: where mail goes when no SMTP server is configured. Each message is one file,
// <data dir>/outbox/<time>-<random>.eml (RFC 5322, readable by any mail program), written to a
// temporary file, fsync'd and renamed into place (platform/files/local-store.ts), so a message
// acknowledged is on disk. `keel admin outbox` lists them (listOutbox).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../clock.js';
import { LocalFileStore } from '../files/local-store.js';
import { composeMail, type Mail, type Mailer } from './mailer.js';

export class OutboxMailer implements Mailer {
  readonly dir: string;
  readonly description: string;
  private readonly store: LocalFileStore;
  private readonly clock: Clock;

  constructor(dir: string, clock: Clock) {
    this.dir = dir;
    this.clock = clock;
    this.store = new LocalFileStore(dir);
    this.description = `no --smtp-url: mail is kept in ${dir} (keel admin outbox lists it)`;
  }

  /** Keeps the message; answers the file's name. */
  async keep(mail: Mail): Promise<string> {
    const now = this.clock.now();
    const name = `${String(now).padStart(14, '0')}-${randomBytes(6).toString('hex')}.eml`;
    await this.store.put(name, await composeMail(mail, new Date(now)));
    return name;
  }

  async send(mail: Mail): Promise<void> {
    await this.keep(mail);
  }

  async close(): Promise<void> {}
}

export interface OutboxEntry {
  file: string;
  date: string;
  to: string;
  subject: string;
}

/** The messages in an outbox directory, oldest first: their file, Date, To and Subject headers. */
export function listOutbox(dir: string): OutboxEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.eml'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.sort().map((file) => {
    const headers = readHeaders(fs.readFileSync(path.join(dir, file), 'utf8'));
    return { file, date: headers.get('date') ?? '', to: headers.get('to') ?? '', subject: headers.get('subject') ?? '' };
  });
}

/** One kept message's text (`keel admin outbox --show FILE`); undefined when there is no such file. */
export async function readOutboxFile(dir: string, file: string): Promise<string | undefined> {
  if (!/^[0-9]+-[0-9a-f]+\.eml$/.test(file)) return undefined;
  try {
    return await fsp.readFile(path.join(dir, file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The header block of a message: names lower-cased, folded lines joined, encoded words decoded. */
function readHeaders(text: string): Map<string, string> {
  const end = text.search(/\r?\n\r?\n/);
  const block = (end < 0 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const out = new Map<string, string>();
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) out.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()));
  }
  return out;
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= and =?UTF-8?B?...?=), as a composer writes non-ASCII headers. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=(\s+(?==\?))?/g, (_all, _charset: string, enc: string, data: string) => {
    if (enc.toUpperCase() === 'B') return Buffer.from(data, 'base64').toString('utf8');
    const bytes = data.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  });
}
