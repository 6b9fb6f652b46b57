// A channel's e-mail address (GET /streams/{stream_id}/email_address, Zulip 10.2's
// get_stream_email_address and zerver/lib/email_mirror_helpers.py): <name>.<token>.show-sender@<host>,
// with a token stored per channel, requesting user and sender (Zulip's ChannelEmailAddress), so an
// address once given keeps working. Keel does not receive mail: the address is only given out.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.js';
import type { ApiKeySeal } from './api-keys.js';
import type { ChatTables, ChatUser, Realm, Stream } from '../tables.js';
import { createUser } from './users.js';
import { ROLE } from './roles.js';

/** Zulip's Email Gateway system bot, made in the realm on first use (as move-notices.ts makes the Notification Bot). */
export const EMAIL_GATEWAY_BOT = { local: 'emailgateway', fullName: 'Email Gateway' } as const;

/** The realm's Email Gateway bot, and whether this call made it (then clients hear of a new user). */
export async function emailGatewayBot(db: Queryable<ChatTables>, realm: Realm, nowMs: number, sealer: ApiKeySeal): Promise<{ bot: ChatUser; made: boolean }> {
  const email = `${EMAIL_GATEWAY_BOT.local}@${realm.email_host}`;
  const found = await db.selectFrom('chat_users').selectAll().where('realm_id', '=', realm.id).where('email_lower', '=', email.toLowerCase()).executeTakeFirst();
  if (found) return { bot: found, made: false };
  const { user } = await createUser(db, realm.id, { email, fullName: EMAIL_GATEWAY_BOT.fullName, password: null, role: ROLE.member, isBot: true, botType: 1 }, nowMs, sealer);
  return { bot: user, made: true };
}

/** The stored token for (channel, requester, sender), made on first request (Zulip's get_channel_email_token). */
export async function channelEmailToken(db: Queryable<ChatTables>, stream: Stream, creatorId: number, senderId: number, nowSeconds: number): Promise<string> {
  const found = await db
    .selectFrom('channel_email_addresses')
    .select('email_token')
    .where('stream_id', '=', stream.id)
    .where('creator_id', '=', creatorId)
    .where('sender_id', '=', senderId)
    .executeTakeFirst();
  if (found) return found.email_token;
  // Zulip's generate_email_token_for_stream: 32 hex digits.
  const token = randomBytes(16).toString('hex');
  await db
    .insertInto('channel_email_addresses')
    .values({ realm_id: stream.realm_id, stream_id: stream.id, creator_id: creatorId, sender_id: senderId, email_token: token, date_created: nowSeconds })
    .execute();
  return token;
}

/**
 * Zulip's encode_email_address: runs of non-word characters in the name become one hyphen; the
 * name is kept only if its ASCII slug (Django's slugify) loses nothing, else the token stands alone.
 */
export function channelEmailAddress(name: string, token: string, host: string): string {
  const hyphenated = name.replace(/[^\p{L}\p{N}\p{M}_]+/gu, '-');
  const slug = hyphenated
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
  const encoded = slug.length === hyphenated.length ? slug : '';
  return `${encoded ? `${encoded}.${token}` : token}.show-sender@${host}`;
}
