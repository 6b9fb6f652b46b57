// GET /streams/{stream_id}/email_address (domain/channel-email.ts). Any user who may read the
// channel gets its address; the sender is the Email Gateway bot (made on first use), the caller, or
// a bot the caller owns (administrators: any bot), as Zulip 10.2 allows.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { invalidChannelId } from '../errors.js';
import { canAccessContent, streamById } from '../domain/channels.js';
import { channelEmailAddress, channelEmailToken, emailGatewayBot } from '../domain/channel-email.js';
import { realmUserAddNotice } from '../events/notices.js';
import { botFor } from './bots.js';
import type { ChatUser } from '../tables.js';

export const getStreamEmailAddress = defineEndpoint({
  method: 'GET',
  path: '/streams/{stream_id}/email_address',
  summary: "Get channel's email address",
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer(), sender_id: Type.Optional(Type.Integer({ minimum: 0 })) }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, clock } = call.services;
    const stream = await streamById(db.kysely, call.realm.id, p.stream_id);
    if (!stream || !(await canAccessContent(db.kysely, me, stream))) throw invalidChannelId();
    let sender: ChatUser | undefined;
    if (p.sender_id === me.id) sender = me;
    else if (p.sender_id !== undefined) {
      const gateway = await db.kysely
        .selectFrom('chat_users')
        .selectAll()
        .where('realm_id', '=', call.realm.id)
        .where('email_lower', '=', `emailgateway@${call.realm.email_host}`.toLowerCase())
        .executeTakeFirst();
      if (gateway?.id !== p.sender_id) sender = await botFor(db.kysely, call, me, p.sender_id);
    }
    const now = clock.now();
    const { token } = await events.write(
      () =>
        db.transaction(async (trx) => {
          const made = sender ? null : await emailGatewayBot(trx, call.realm, now, call.services.apiKeySeal);
          const who = sender ?? made!.bot;
          return { token: await channelEmailToken(trx, stream, me.id, who.id, Math.floor(now / 1000)), made };
        }),
      async ({ made }) => (made?.made ? realmUserAddNotice(db.kysely, call.realm.id, made.bot) : []),
    );
    return { email: channelEmailAddress(stream.name, token, call.realm.email_host) };
  },
});
