// `keel admin outbox [--show FILE]`: the chat mail kept in <data-dir>/outbox when no --smtp-url is
// set (or that the SMTP server refused): one line per message, oldest first, or one message whole.
import { buildConfig } from './config/config.js';
import { readCommandArgs, readOptions, UsageError } from './config/env.js';
import { outboxDir } from './app.js';
import { listOutbox, readOutboxFile } from './platform/mail/outbox.js';

export const OUTBOX_USAGE = `  admin outbox [--show FILE] [--json]
            list the chat mail (invitations) kept in <data-dir>/outbox when no --smtp-url is set
            (or the SMTP server refused it), oldest first; --show prints one message whole`;

export async function runOutboxAdmin(argv: string[], out: (line: string) => void): Promise<number> {
  const { own, shared } = readCommandArgs(argv, { show: { type: 'string' } });
  const { options } = readOptions(shared);
  const dir = outboxDir(buildConfig(options));
  if (own.show !== undefined) {
    const text = await readOutboxFile(dir, own.show);
    if (text === undefined) throw new UsageError(`no message ${JSON.stringify(own.show)} in ${dir} (keel admin outbox lists them)`);
    out(text);
    return 0;
  }
  const entries = listOutbox(dir);
  if (options.json) {
    out(JSON.stringify({ outbox: dir, messages: entries }));
    return 0;
  }
  if (!entries.length) {
    out(`no mail in ${dir}`);
    return 0;
  }
  out(`${entries.length} message${entries.length === 1 ? '' : 's'} in ${dir}:`);
  for (const e of entries) out(`  ${e.file}  ${e.date}  to ${e.to}  ${e.subject}`);
  return 0;
}
