// `keel admin create-user|create-bot`: makes Chat accounts from the command line (for the first
// people and bots of a realm), printing the new account's id, email and API key once.
import { parseArgs } from 'node:util';
import { buildConfig } from '../config/config.js';
import { OPTIONS, readOptions, UsageError } from '../config/env.js';
import { openStore } from '../context.js';
import type { Database } from '../platform/db/database.js';
import { randomPassword } from '../platform/auth/secrets.js';
import { ChatError } from './errors.js';
import type { ChatTables } from './tables.js';
import { theRealm } from './domain/realm.js';
import { ROLE } from './domain/roles.js';
import { checkFullName, createUser, userByEmail } from './domain/users.js';
import { botEmail } from './domain/user-rules.js';

const ROLE_NAMES: Record<string, number> = { owner: ROLE.owner, admin: ROLE.administrator, moderator: ROLE.moderator, member: ROLE.member, guest: ROLE.guest };

export const ADMIN_USAGE = `  admin create-user --email E --full-name N [--role owner|admin|moderator|member|guest] [--password P] [--json]
  admin create-bot --owner-email E --full-name N --short-name S [--json]`;

const OWN = {
  email: { type: 'string' }, 'full-name': { type: 'string' }, role: { type: 'string' }, password: { type: 'string' },
  'owner-email': { type: 'string' }, 'short-name': { type: 'string' },
} as const;

/** Splits admin flags from the shared ones (data dir, database URL ...), which readOptions checks. */
function readAdminArgs(argv: string[]): { own: Record<string, string | undefined>; shared: string[] } {
  const spec: Record<string, { type: 'string' | 'boolean' }> = { ...OWN, json: { type: 'boolean' }, help: { type: 'boolean' } };
  for (const name of Object.keys(OPTIONS)) spec[name] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: false, tokens: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]);
  }
  const own: Record<string, string | undefined> = {};
  const shared: string[] = [];
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option') continue;
    if (t.name in OWN) own[t.name] = t.value;
    else shared.push(`--${t.name}`, ...(t.value === undefined ? [] : [t.value]));
  }
  return { own, shared };
}

function need(own: Record<string, string | undefined>, name: string): string {
  const v = own[name];
  if (v === undefined || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v;
}

export async function runAdmin(argv: string[], out: (line: string) => void): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'create-user' && sub !== 'create-bot') throw new UsageError(`unknown admin command "${sub ?? ''}" (admin commands: create-user, create-bot)`);
  const { own, shared } = readAdminArgs(rest);
  const { options } = readOptions(shared);
  const allowed = sub === 'create-user' ? ['email', 'full-name', 'role', 'password'] : ['owner-email', 'full-name', 'short-name'];
  const stray = Object.keys(own).find((k) => !allowed.includes(k));
  if (stray) throw new UsageError(`--${stray} does not apply to admin ${sub}`);
  const config = buildConfig(options);
  // Check the input before touching the store, so bad input changes nothing.
  const fullName = need(own, 'full-name');
  try {
    checkFullName(fullName);
  } catch (err) {
    throw new UsageError(`--full-name: ${(err as Error).message}`);
  }
  let role: number = ROLE.member;
  if (own.role !== undefined) {
    if (!(own.role in ROLE_NAMES)) throw new UsageError(`--role must be one of ${Object.keys(ROLE_NAMES).join(', ')}`);
    role = ROLE_NAMES[own.role];
  }
  const db = (await openStore(config)) as unknown as Database<ChatTables>;
  try {
    const realm = await theRealm(db.kysely);
    if (!realm) throw new UsageError('Keel is not set up yet: run keel init first');
    const now = Date.now();
    let result: Record<string, unknown>;
    if (sub === 'create-user') {
      const email = need(own, 'email');
      const generated = own.password === undefined;
      const password = own.password ?? randomPassword();
      const made = await db.transaction((trx) => createUser(trx, realm.id, { email, fullName, password, role }, now));
      result = { userId: made.user.id, email: made.user.email, apiKey: made.apiKey, ...(generated ? { password } : {}) };
    } else {
      const ownerEmail = need(own, 'owner-email');
      const shortName = need(own, 'short-name').trim();
      if (!/^[A-Za-z0-9._+-]+$/.test(shortName)) throw new UsageError('--short-name may hold only letters, digits and . _ + -');
      const made = await db.transaction(async (trx) => {
        const owner = await userByEmail(trx, realm.id, ownerEmail);
        if (!owner || owner.is_active !== 1 || owner.is_bot === 1) throw new UsageError(`no active user has the email ${ownerEmail}`);
        return createUser(trx, realm.id, { email: botEmail(shortName, realm.email_host), fullName, password: null, role: ROLE.member, isBot: true, botType: 1, botOwnerId: owner.id }, now);
      });
      result = { userId: made.user.id, email: made.user.email, apiKey: made.apiKey };
    }
    if (options.json) out(JSON.stringify(result));
    else {
      out(`${sub === 'create-user' ? 'user' : 'bot'} ${result.userId} created; its secrets are shown only this once:`);
      out(`  email:    ${String(result.email)}`);
      out(`  API key:  ${String(result.apiKey)}`);
      if (result.password) out(`  password: ${String(result.password)}`);
    }
    return 0;
  } catch (err) {
    // A rule of the API (email in use, bad email) is bad input here too: one line, exit 2.
    if (err instanceof ChatError) throw new UsageError(err.message);
    throw err;
  } finally {
    await db.close();
  }
}
