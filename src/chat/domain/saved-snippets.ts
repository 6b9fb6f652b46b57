// Saved snippets (Zulip's SavedSnippet): a user's titled pieces of message text, to insert into a
// message. Titles and contents are trimmed and may not be empty; a title holds at most 60
// characters and a content what a message holds.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { paramTooLong, savedSnippetContentEmpty, savedSnippetTitleEmpty } from '../errors.js';
import { MAX_MESSAGE_LENGTH } from './realm.js';
import type { Notice } from '../events/hub.js';

export const MAX_TITLE_LENGTH = 60;

export function checkTitle(raw: string): string {
  const title = raw.trim();
  if (title === '') throw savedSnippetTitleEmpty();
  if ([...title].length > MAX_TITLE_LENGTH) throw paramTooLong({ name: 'title', var_name: 'title', limit: MAX_TITLE_LENGTH });
  return title;
}

export function checkContent(raw: string): string {
  const content = raw.trim();
  if (content === '') throw savedSnippetContentEmpty();
  if ([...content].length > MAX_MESSAGE_LENGTH) throw paramTooLong({ name: 'content', var_name: 'content', limit: MAX_MESSAGE_LENGTH });
  return content;
}

export function snippetObject(r: { id: number; title: string; content: string; date_created: number }): Record<string, unknown> {
  return { id: Number(r.id), title: r.title, content: r.content, date_created: Number(r.date_created) };
}

export async function snippetsOf(db: Queryable<ChatTables>, userId: number): Promise<Record<string, unknown>[]> {
  return (await db.selectFrom('saved_snippets').selectAll().where('user_id', '=', userId).orderBy('id').execute()).map(snippetObject);
}

export type SnippetChange = { op: 'add' | 'update'; saved_snippet: Record<string, unknown> } | { op: 'remove'; saved_snippet_id: number };

/** saved_snippets: one change, to the user's own queues. */
export function snippetsNotice(userId: number, change: SnippetChange): Notice[] {
  return [{ type: 'saved_snippets', userIds: [userId], render: () => ({ type: 'saved_snippets', ...change }) }];
}
