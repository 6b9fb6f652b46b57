// Synchronised drafts (Zulip's drafts.py rules): a draft is unaddressed, to one channel the user can
// reach, or to users of the realm; its content follows the message body rules.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { draftChannelCount, draftsDisabled, invalidChannelId, invalidUserId, negativeTimestamp, topicNullBytes } from '../errors.js';
import { canAccessContent, streamById } from './channels.js';
import { normaliseBody } from './topics.js';
import { MAX_TOPIC_LENGTH } from './realm.js';
import { booleanSetting } from './presence.js';

export interface DraftInput {
  type: '' | 'stream' | 'private';
  to: number[];
  topic: string;
  content: string;
  timestamp?: number;
}

export interface CheckedDraft {
  type: string;
  to_ids: string;
  topic: string;
  content: string;
  last_edit_time: number;
}

/** Zulip keeps at most this many drafts in the register response. */
export const MAX_DRAFTS_IN_REGISTER = 1000;

/** Every draft endpoint refuses while the user has synchronisation off. */
export function checkDraftsEnabled(me: ChatUser): void {
  if (!booleanSetting(me, 'enable_drafts_synchronization', true)) throw draftsDisabled();
}

export async function checkDraft(db: Queryable<ChatTables>, me: ChatUser, d: DraftInput, nowSeconds: number): Promise<CheckedDraft> {
  const content = normaliseBody(d.content);
  const timestamp = d.timestamp ?? nowSeconds;
  if (timestamp < 0) throw negativeTimestamp();
  let topic = '';
  let to: number[] = [];
  let type: string = d.type;
  if (d.type === 'stream') {
    const chars = [...d.topic];
    topic = chars.length > MAX_TOPIC_LENGTH ? chars.slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...' : d.topic;
    if (topic.includes('\u0000')) throw topicNullBytes();
    if (d.to.length !== 1) throw draftChannelCount();
    const stream = await streamById(db, me.realm_id, d.to[0]);
    if (!stream || !(await canAccessContent(db, me, stream))) throw invalidChannelId();
    to = [stream.id];
  } else if (d.type === 'private' && d.to.length) {
    const ids = [...new Set(d.to)];
    const found = await db.selectFrom('chat_users').select('id').where('realm_id', '=', me.realm_id).where('id', 'in', ids).execute();
    const missing = ids.find((id) => !found.some((u) => Number(u.id) === id));
    if (missing !== undefined) throw invalidUserId({ id: missing });
    // As Zulip shows a conversation: the others, sorted; oneself only when alone in it.
    const others = ids.filter((id) => id !== me.id).sort((a, b) => a - b);
    to = others.length ? others : [me.id];
  } else {
    // A direct draft without recipients is stored unaddressed, as Zulip does.
    type = '';
  }
  return { type, to_ids: JSON.stringify(to), topic, content, last_edit_time: Math.floor(timestamp) };
}

export function draftObject(row: { id: number; type: string; to_ids: string; topic: string; content: string; last_edit_time: number }): Record<string, unknown> {
  return { id: Number(row.id), type: row.type, to: JSON.parse(row.to_ids) as number[], topic: row.topic, content: row.content, timestamp: Number(row.last_edit_time) };
}

/** The user's drafts, most recently edited first. */
export async function draftsOf(db: Queryable<ChatTables>, userId: number, limit?: number): Promise<Record<string, unknown>[]> {
  let q = db.selectFrom('drafts').selectAll().where('user_id', '=', userId).orderBy('last_edit_time', 'desc').orderBy('id', 'desc');
  if (limit !== undefined) q = q.limit(limit);
  return (await q.execute()).map(draftObject);
}
