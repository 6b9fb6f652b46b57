// Changing personal message flags (read, starred, collapsed) on a user's copies of messages.
import { sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';

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
  }
  return changed;
}
