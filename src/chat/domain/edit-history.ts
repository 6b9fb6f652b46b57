// A message's edit history as clients see it: edit_history and the last edit and move times on the
// message object, and GET /messages/{message_id}/history's snapshots, under the realm's
// message_edit_history_visibility_policy ('all', 'moves' only, or 'none').
import type { Message } from '../tables.js';
import { displayTopic } from './topics.js';
import type { HistoryEntry } from './message-edits.js';

export function parseHistory(json: string | null): HistoryEntry[] {
  return json ? (JSON.parse(json) as HistoryEntry[]) : [];
}

const isMove = (e: HistoryEntry) => e.prev_topic !== undefined || e.prev_stream !== undefined;

/** The entries the policy shows; under 'moves' a combined entry keeps only its move. */
export function visibleHistory(entries: HistoryEntry[], policy: string): HistoryEntry[] {
  if (policy === 'none') return [];
  if (policy === 'all') return entries;
  return entries.filter(isMove).map(({ prev_content: _c, prev_rendered_content: _r, ...rest }) => rest);
}

function shownTopics(e: HistoryEntry, allowEmpty: boolean): HistoryEntry {
  const out = { ...e };
  if (out.prev_topic !== undefined) out.prev_topic = displayTopic(out.prev_topic, allowEmpty);
  if (out.topic !== undefined) out.topic = displayTopic(out.topic, allowEmpty);
  return out;
}

/** edit_history, last_edit_timestamp and last_moved_timestamp, each only when there is one. */
export function editFields(m: Pick<Message, 'edit_history' | 'last_edit_time' | 'last_moved_time'>, policy: string, allowEmpty: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const entries = visibleHistory(parseHistory(m.edit_history), policy);
  if (entries.length) out.edit_history = entries.map((e) => shownTopics(e, allowEmpty));
  if (m.last_edit_time !== null) out.last_edit_timestamp = Number(m.last_edit_time);
  if (m.last_moved_time !== null) out.last_moved_timestamp = Number(m.last_moved_time);
  return out;
}

/**
 * GET /messages/{message_id}/history: the original message, then the message after each edit,
 * oldest first; each later snapshot carries the prev_ fields of what that edit changed.
 */
export function historySnapshots(m: Message, policy: string, allowEmpty: boolean): Record<string, unknown>[] {
  const entries = visibleHistory(parseHistory(m.edit_history), policy);
  let state = { topic: m.topic, content: m.content, rendered_content: m.rendered_content };
  const out: Record<string, unknown>[] = [];
  // Walk back from the current state, newest edit first, undoing each.
  for (const e of entries) {
    const snap: Record<string, unknown> = { ...shownTopics(e, allowEmpty), topic: displayTopic(state.topic, allowEmpty), content: state.content, rendered_content: state.rendered_content };
    out.push(snap);
    if (e.prev_topic !== undefined) state = { ...state, topic: e.prev_topic };
    if (e.prev_content !== undefined) state = { ...state, content: e.prev_content, rendered_content: e.prev_rendered_content ?? state.rendered_content };
  }
  out.push({ topic: displayTopic(state.topic, allowEmpty), content: state.content, rendered_content: state.rendered_content, timestamp: Number(m.date_sent), user_id: m.sender_id });
  return out.reverse();
}
