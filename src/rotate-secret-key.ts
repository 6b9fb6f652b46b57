// `keel admin rotate-secret-key --new-key-file FILE`: replaces the server's secret key (server-keys.ts
// rotateSecretKey) and tells the operator what to do next. Every node must be stopped first: one
// still running would keep sealing new chat API keys under the old key.
import path from 'node:path';
import { buildConfig } from './config/config.js';
import { readCommandArgs, readOptions, UsageError } from './config/env.js';
import { openStore } from './app.js';
import { rotateSecretKey, secretKeyFile } from './server-keys.js';

export const ROTATE_USAGE = `  admin rotate-secret-key --new-key-file FILE [--json]
            stop every node first; seals every chat API key again under the key in FILE (made, 0600,
            when it does not exist) in one transaction; then start every node with the new key`;

export async function runRotateSecretKey(argv: string[], out: (line: string) => void): Promise<number> {
  const { own, shared } = readCommandArgs(argv, { 'new-key-file': { type: 'string' } });
  const given = own['new-key-file'];
  if (given === undefined || given.trim() === '') throw new UsageError('--new-key-file is required');
  const newFile = path.resolve(given);
  const { options } = readOptions(shared);
  const config = buildConfig(options);
  const current = secretKeyFile(config);
  if (current === newFile) throw new UsageError(`--new-key-file must not be the key file in use (${current}): give another path, then move it into place`);
  const db = await openStore(config);
  let result;
  try {
    result = await rotateSecretKey(db, config, newFile);
  } finally {
    await db.close();
  }
  const how =
    current === undefined
      ? `set KEEL_SECRET_KEY to the contents of ${newFile}`
      : config.secretKeyFile
        ? `use --secret-key-file ${newFile} (or copy it over ${current})`
        : `move it into place (mv ${newFile} ${current})${config.databaseUrl ? ' on every node' : ''}`;
  if (options.json) out(JSON.stringify({ newKeyFile: newFile, createdKeyFile: result.createdFile, resealedApiKeys: result.resealed }));
  else {
    out(
      `${result.createdFile ? `Made a new secret key in ${newFile} (mode 0600). ` : ''}The database now uses the key in ${newFile}: ${result.resealed} chat API keys sealed again under it (they still work).`,
    );
    out(`Now start every Keel node with the new key: ${how}. Nodes given the old key refuse to start.`);
    out('JWTs issued under the old key no longer verify: their holders must log in again. Keep the new key file safe and delete copies of the old one.');
  }
  return 0;
}
