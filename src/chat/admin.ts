// `keel admin create-realm|create-user|create-bot`: makes Chat realms (organizations, each with its
// owner) and accounts from the command line, printing the new account's id, email and API key once.
// `keel admin deactivate-realm|reactivate-realm` (Zulip's manage.py commands of those names): a
// running server sees the change within READ_CACHE_TTL_MS (chat/auth.ts), and the deactivated
// realm's event queues end at its first request after that.
import { buildConfig, type Config } from '../config/config.js';
import { readCommandArgs, readOptions, UsageError } from '../config/env.js';
import type { Database } from '../platform/db/database.js';
import type { OpenStore } from '../platform/db/open.js';
import { bindServerKeys } from '../server-keys.js';
import type { ApiKeySeal } from './domain/api-keys.js';
import { randomPassword } from '../platform/auth/secrets.js';
import { ChatError } from './errors.js';
import type { ChatTables } from './tables.js';
import { createRealm, realmBySubdomain, setRealmDeactivated } from './domain/realm.js';
import { chatRootDomain, chatUrl, checkSubdomain, realmUrlFor, ROOT_SUBDOMAIN } from './domain/subdomains.js';
import { ROLE } from './domain/roles.js';
import { checkFullName, createUser, userByDeliveryEmail } from './domain/users.js';
import { botEmail } from './domain/user-rules.js';
import fs from 'node:fs';
import path from 'node:path';
import { LocalFileStore } from '../platform/files/local-store.js';
import { ImportError, importRealm, type ImportSummary } from './exports/read.js';

const ROLE_NAMES: Record<string, number> = { owner: ROLE.owner, admin: ROLE.administrator, moderator: ROLE.moderator, member: ROLE.member, guest: ROLE.guest };

export const ADMIN_USAGE = `  admin create-realm --name N --subdomain S --owner-email E [--owner-full-name N] [--owner-password P] [--json]
  admin create-user --email E --full-name N [--role owner|admin|moderator|member|guest] [--password P] [--realm S] [--json]
  admin create-bot --owner-email E --full-name N --short-name S [--realm S] [--json]
            create a chat realm (with its owner), user or bot and print its id, email and API key once
  admin deactivate-realm --realm S [--json]
  admin reactivate-realm --realm S [--json]
            deactivate a chat realm (every request to it refused; its users and data kept), or reactivate it
  admin import-realm FILE --subdomain S [--json]
            read a realm export (.tar.gz, from POST /export/realm) into a new realm: new ids, no
            passwords, new API keys (make an owner's credentials with create-user --role owner --realm S)`;

const OWN = {
  email: { type: 'string' },
  'full-name': { type: 'string' },
  role: { type: 'string' },
  password: { type: 'string' },
  'owner-email': { type: 'string' },
  'short-name': { type: 'string' },
  name: { type: 'string' },
  subdomain: { type: 'string' },
  'owner-full-name': { type: 'string' },
  'owner-password': { type: 'string' },
  realm: { type: 'string' },
} as const;

const ALLOWED: Record<string, string[]> = {
  'create-realm': ['name', 'subdomain', 'owner-email', 'owner-full-name', 'owner-password'],
  'create-user': ['email', 'full-name', 'role', 'password', 'realm'],
  'create-bot': ['owner-email', 'full-name', 'short-name', 'realm'],
  'deactivate-realm': ['realm'],
  'reactivate-realm': ['realm'],
  'import-realm': ['subdomain'],
};

export const CHAT_ADMIN_COMMANDS = Object.keys(ALLOWED);

function need(own: Record<string, string | undefined>, name: string): string {
  const v = own[name];
  if (v === undefined || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** A realm's creation: its URL (its subdomain under the chat root domain) and its owner's secrets. */
async function createRealmCommand(config: Config, open: OpenStore, own: Record<string, string | undefined>): Promise<Record<string, unknown>> {
  const name = need(own, 'name');
  const checked = checkSubdomain(need(own, 'subdomain'));
  if (!checked.ok) throw new UsageError(`--subdomain: ${checked.reason}`);
  const ownerName = own['owner-full-name'] ?? 'Owner';
  try {
    checkFullName(ownerName);
  } catch (err) {
    throw new UsageError(`--owner-full-name: ${(err as Error).message}`);
  }
  const email = need(own, 'owner-email');
  const generated = own['owner-password'] === undefined;
  const password = own['owner-password'] ?? randomPassword();
  const rootDomain = chatRootDomain(config);
  const realmUrl = realmUrlFor(chatUrl(config.chatListen, config.chatRootDomain), rootDomain, checked.subdomain);
  const made = await withStore(config, open, (db, sealer) =>
    db.transaction(async (trx) => {
      if (!(await realmBySubdomain(trx, ROOT_SUBDOMAIN))) throw new UsageError('Keel is not set up yet: run keel init first');
      return createRealm(trx, { stringId: checked.subdomain, name, emailHost: `${checked.subdomain}.${rootDomain}`, owner: { email, fullName: ownerName, password } }, Date.now(), sealer);
    }),
  );
  return {
    realmId: made.realm.id,
    subdomain: made.realm.string_id,
    realmUrl,
    userId: made.owner.id,
    email: made.owner.delivery_email,
    apiKey: made.apiKey,
    ...(generated ? { password } : {}),
  };
}

/** A user or a bot in an existing realm (--realm: its subdomain; the first realm by default). */
async function createAccountCommand(config: Config, open: OpenStore, sub: string, own: Record<string, string | undefined>): Promise<Record<string, unknown>> {
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
  const email = sub === 'create-user' ? need(own, 'email') : '';
  const ownerEmail = sub === 'create-bot' ? need(own, 'owner-email') : '';
  const shortName = sub === 'create-bot' ? need(own, 'short-name').trim() : '';
  if (sub === 'create-bot' && !/^[A-Za-z0-9._+-]+$/.test(shortName)) throw new UsageError('--short-name may hold only letters, digits and . _ + -');
  const generated = own.password === undefined;
  const password = own.password ?? randomPassword();
  const now = Date.now();
  const made = await withStore(config, open, async (db, sealer) => {
    const realm = await realmBySubdomain(db.kysely, own.realm?.trim().toLowerCase() ?? ROOT_SUBDOMAIN);
    if (!realm) throw new UsageError(own.realm === undefined ? 'Keel is not set up yet: run keel init first' : `no realm has the subdomain "${own.realm}"`);
    if (sub === 'create-user') return db.transaction((trx) => createUser(trx, realm.id, { email, fullName, password, role }, now, sealer));
    return db.transaction(async (trx) => {
      const owner = await userByDeliveryEmail(trx, realm.id, ownerEmail);
      if (!owner || owner.is_active !== 1 || owner.is_bot === 1) throw new UsageError(`no active user has the email ${ownerEmail}`);
      return createUser(trx, realm.id, { email: botEmail(shortName, realm.email_host), fullName, password: null, role: ROLE.member, isBot: true, botType: 1, botOwnerId: owner.id }, now, sealer);
    });
  });
  // The login name: the real address, even when the realm's default hides it from others.
  return { userId: made.user.id, email: made.user.delivery_email, apiKey: made.apiKey, ...(sub === 'create-user' && generated ? { password } : {}) };
}

/** Deactivates or reactivates the realm of --realm (required: no default for this one); a realm already so changes nothing. */
async function realmStateCommand(config: Config, open: OpenStore, sub: string, own: Record<string, string | undefined>): Promise<Record<string, unknown>> {
  const subdomain = need(own, 'realm').trim().toLowerCase();
  const deactivated = sub === 'deactivate-realm';
  const changed = await withStore(config, open, async (db) => {
    const realm = await realmBySubdomain(db.kysely, subdomain);
    if (!realm) throw new UsageError(`no realm has the subdomain "${own.realm}"`);
    return { realmId: realm.id, changed: await setRealmDeactivated(db.kysely, realm.id, deactivated) };
  });
  return { ...changed, subdomain, deactivated };
}

/** Reads an export into a new realm of --subdomain; the files go into the data dir's file store, as the server's uploads do. */
async function importRealmCommand(config: Config, open: OpenStore, file: string | undefined, own: Record<string, string | undefined>): Promise<ImportSummary & { realmUrl: string }> {
  if (!file) throw new UsageError('admin import-realm needs the export file: keel admin import-realm FILE --subdomain S');
  if (!fs.existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const checked = checkSubdomain(need(own, 'subdomain').toLowerCase());
  if (!checked.ok) throw new UsageError(`--subdomain: ${checked.reason}`);
  const rootDomain = chatRootDomain(config);
  const files = new LocalFileStore(path.join(config.dataDir, 'uploads'));
  const summary = await withStore(config, open, async (db, sealer) => {
    if (!(await realmBySubdomain(db.kysely, ROOT_SUBDOMAIN))) throw new UsageError('Keel is not set up yet: run keel init first');
    try {
      return await importRealm({ db, files, sealer, nowMs: Date.now() }, file, checked.subdomain, `${checked.subdomain}.${rootDomain}`);
    } catch (err) {
      if (err instanceof ImportError) throw new UsageError(err.message);
      throw err;
    }
  });
  return { ...summary, realmUrl: realmUrlFor(chatUrl(config.chatListen, config.chatRootDomain), rootDomain, checked.subdomain) };
}

/** Runs `work` on the store, closed afterwards; opened only once the input passed its checks, so bad input changes nothing. */
async function withStore<T>(config: Config, open: OpenStore, work: (db: Database<ChatTables>, sealer: ApiKeySeal) => Promise<T>): Promise<T> {
  const db = await open<ChatTables>(config);
  try {
    return await work(db, (await bindServerKeys(db, config)).apiKeySeal);
  } catch (err) {
    // A rule of the API (email in use, bad email) is bad input here too: one line, exit 2.
    if (err instanceof ChatError) throw new UsageError(err.message);
    throw err;
  } finally {
    await db.close();
  }
}

const WHAT: Record<string, string> = { 'create-realm': 'realm owner', 'create-user': 'user', 'create-bot': 'bot' };

/** `open` opens the store the configuration names, its schema up to date (the composition root's openStore). */
export async function runAdmin(argv: string[], out: (line: string) => void, open: OpenStore): Promise<number> {
  const [sub, ...rest] = argv;
  // import-realm's one positional argument: the export file.
  const file = sub === 'import-realm' && rest.length && !rest[0].startsWith('-') ? rest.shift() : undefined;
  if (sub === undefined || !(sub in ALLOWED)) throw new UsageError(`unknown admin command "${sub ?? ''}" (admin commands: ${Object.keys(ALLOWED).join(', ')})`);
  const { own, shared } = readCommandArgs(rest, OWN);
  const { options } = readOptions(shared);
  const stray = Object.keys(own).find((k) => !ALLOWED[sub].includes(k));
  if (stray) throw new UsageError(`--${stray} does not apply to admin ${sub}`);
  const config = buildConfig(options);
  if (sub === 'import-realm') {
    const result = await importRealmCommand(config, open, file, own);
    if (options.json) out(JSON.stringify(result));
    else
      out(
        `realm ${result.subdomain} (${String(result.realmUrl)}) imported: ${result.users} users, ${result.channels} channels, ${result.messages} messages, ${result.reactions} reactions, ${result.uploads} uploads, ${result.emoji} custom emoji.`,
      );
    return 0;
  }
  if (sub === 'deactivate-realm' || sub === 'reactivate-realm') {
    const result = await realmStateCommand(config, open, sub, own);
    const state = result.deactivated ? 'deactivated' : 'active';
    if (options.json) out(JSON.stringify(result));
    else out(result.changed ? `realm ${String(result.subdomain)} ${result.deactivated ? 'deactivated' : 'reactivated'}.` : `realm ${String(result.subdomain)} is already ${state}.`);
    return 0;
  }
  const result = sub === 'create-realm' ? await createRealmCommand(config, open, own) : await createAccountCommand(config, open, sub, own);
  if (options.json) out(JSON.stringify(result));
  else {
    if (sub === 'create-realm') out(`realm ${String(result.subdomain)} (${String(result.realmUrl)}) created.`);
    out(`${WHAT[sub]} ${String(result.userId)} created; its secrets are shown only this once:`);
    out(`  email:    ${String(result.email)}`);
    out(`  API key:  ${String(result.apiKey)}`);
    if (result.password) out(`  password: ${String(result.password)}`);
  }
  return 0;
}
