// GET /messages/{message_id}/read_receipts: who has read a message the caller may read, as Zulip's
// read_receipts view decides: only when the organization enables read receipts; never the sender;
// only active users whose send_read_receipts setting is on; nobody the caller muted or who muted
// the caller. A channel message read by no one has no rows here (receipt.ts spans are unread).
import Type from 'typebox';
import { sql } from 'kysely';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { readReceiptsDisabled } from '../errors.js';
import { readableMessage } from '../domain/message-edits.js';
import { FLAG } from '../domain/flags.js';
import { booleanSetting } from '../domain/presence.js';

export const getReadReceipts = defineEndpoint({
  method: 'GET',
  path: '/messages/{message_id}/read_receipts',
  summary: "Get a message's read receipts",
  auth: 'user',
  params: Type.Object({ message_id: Type.Integer({ minimum: 0 }) }),
  async handler(call, p) {
    const me = requireUser(call);
    const db = call.services.db.kysely;
    const message = await readableMessage(db, call.realm.id, me, p.message_id);
    const realm = await db.selectFrom('realms').select('enable_read_receipts').where('id', '=', call.realm.id).executeTakeFirstOrThrow();
    if (realm.enable_read_receipts !== 1) throw readReceiptsDisabled();
    const readers = await db
      .selectFrom('user_messages as um')
      .innerJoin('chat_users as u', 'u.id', 'um.user_id')
      .select(['u.id', 'u.settings'])
      .where('um.message_id', '=', message.id)
      .where(sql<boolean>`(um.flags & ${FLAG.read}) <> 0`)
      .where('u.is_active', '=', 1)
      .where('u.id', '<>', message.sender_id)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('muted_users as m')
              .select('m.user_id')
              .where((eb) =>
                eb.or([eb.and([eb('m.user_id', '=', eb.ref('u.id')), eb('m.muted_user_id', '=', me.id)]), eb.and([eb('m.user_id', '=', me.id), eb('m.muted_user_id', '=', eb.ref('u.id'))])]),
              ),
          ),
        ),
      )
      .orderBy('u.id')
      .execute();
    return { user_ids: readers.filter((r) => booleanSetting(r, 'send_read_receipts', true)).map((r) => Number(r.id)) };
  },
});
