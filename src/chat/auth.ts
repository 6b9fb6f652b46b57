// HTTP Basic authentication of Chat requests (email:api_key, bots alike), with Zulip's errors:
// no or unreadable header 401 UNAUTHORIZED with a Basic challenge, another scheme 400, a bad key
// 401 INVALID_API_KEY, a deactivated account 401 USER_DEACTIVATED.
import type { Queryable } from '../platform/db/database.js';
import { constantTimeEqual } from '../platform/auth/secrets.js';
import type { ChatTables, ChatUser } from './tables.js';
import { badRequest, invalidApiKey, unauthorized, userDeactivated } from './errors.js';
import { apiKeyHash, isWellFormedApiKey } from './domain/api-keys.js';

export function readBasic(header: string | undefined): { email: string; apiKey: string } {
  if (header === undefined) throw unauthorized('Missing authorization header for basic auth');
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2) throw unauthorized('Invalid authorization header for basic auth');
  if (parts[0].toLowerCase() !== 'basic') throw badRequest('This endpoint requires HTTP basic authentication.');
  const decoded = Buffer.from(parts[1], 'base64').toString('utf8').split(':');
  if (decoded.length !== 2) throw unauthorized('Invalid authorization header for basic auth');
  return { email: decoded[0], apiKey: decoded[1] };
}

export async function authenticate(db: Queryable<ChatTables>, realmId: number, header: string | undefined): Promise<ChatUser> {
  const { email, apiKey } = readBasic(header);
  if (!isWellFormedApiKey(apiKey)) throw invalidApiKey('Malformed API key');
  const hash = apiKeyHash(apiKey);
  const user = await db.selectFrom('chat_users').selectAll().where('api_key_hash', '=', hash).where('realm_id', '=', realmId).executeTakeFirst();
  // Compare even when no row matched, so the time taken does not tell a near miss.
  const keyOk = constantTimeEqual(user?.api_key_hash ?? apiKeyHash('no such key'), hash);
  if (!user || !keyOk) throw invalidApiKey();
  const who = email.trim().toLowerCase();
  if (who !== user.email_lower && who !== user.delivery_email.toLowerCase()) throw invalidApiKey();
  if (user.is_active !== 1) throw userDeactivated();
  return user;
}
