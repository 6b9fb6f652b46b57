// Changing personal message flags (read, starred, collapsed) on a user's copies of messages.
import { sql, type RawBuilder } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { flagsSql, inSpan, receivedSql } from './receipt.js';
import { FLAG } from './flags.js';

/** Sets or clears one flag bit on the user's copies; answers how many copies changed. */
export async function setFlag(db: Queryable<ChatTables>, userId: number, messageIds: number[], bit: number, add: boolean): Promise<number> {
  let changed = 0;
  // Batches keep the parameter count under both engines' limits.
  for (let i = 0; i < messageIds.length; i += 500) {
    const batch = messageIds.slice(i, i + 500);
    const r = await db
      .updateTable('user_messages')
      .set({ flags: add ? sql<number>`flags | ${bit}` : sql<number>`flags & ${~bit}` })
      .where('user_id', '=', userId)
      .where('message_id', 'in', batch)
      .where(add ? sql<boolean>`(flags & ${bit}) = 0` : sql<boolean>`(flags & ${bit}) <> 0`)
      .executeTakeFirst();
    changed += Number(r.numUpdatedRows);
    // Received through a subscription span with default flags (no row yet): setting a bit writes the row.
    if (add) {
      const made = await sql`insert into user_messages (user_id, message_id, flags) select ${userId}, m.id, ${bit} from messages m
        where m.id in (${sql.join(batch)}) and not exists (select 1 from user_messages um where um.user_id = ${userId} and um.message_id = m.id) and ${inSpan(userId)}`.execute(db);
      changed += Number(made.numAffectedRows ?? 0);
    }
  }
  return changed;
}

/** The user's unread copies of the messages `m` matching `where`. */
export async function unreadIds(db: Queryable<ChatTables>, userId: number, where: RawBuilder<unknown>): Promise<number[]> {
  const rows = await sql<{ message_id: number }>`select m.id as message_id from messages m left join user_messages um on um.message_id = m.id and um.user_id = ${userId}
    where ${receivedSql(userId)} and (${flagsSql(userId)} & ${FLAG.read}) = 0 and ${where}`.execute(db);
  return rows.rows.map((r) => Number(r.message_id));
}
