// Alert words: a user's words or phrases that flag a message containing them (has_alert_word, the
// is:alerted narrow). Matching follows Zulip: case-insensitive, on the message source, and only where
// the word stands apart: at the start or after a space, newline or opening punctuation, and at the
// end or before a space, newline or closing punctuation ("cat" alerts in "the cat." but not "cats").
import type { Queryable } from '../../platform/db/database.js';
import { TableCache } from '../../platform/db/fast/table-cache.js';
import type { ChatTables } from '../tables.js';
import { alertWordTooLong } from '../errors.js';
import { checkRoom } from './bounds.js';

export const MAX_ALERT_WORD_LENGTH = 100;

const BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const AFTER = new Set([' ', '\n', ')', '"', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

/** The words as Zulip takes them: each at most 100 characters, then trimmed, empty ones dropped. */
export function cleanAlertWords(words: string[]): string[] {
  words.forEach((w, i) => {
    if (w.length > MAX_ALERT_WORD_LENGTH) throw alertWordTooLong({ index: i, limit: MAX_ALERT_WORD_LENGTH });
  });
  return words.map((w) => w.trim()).filter((w) => w !== '');
}

/** The user's alert words, in the order they were added. */
export async function alertWords(db: Queryable<ChatTables>, userId: number): Promise<string[]> {
  return (await db.selectFrom('alert_words').select('word').where('user_id', '=', userId).orderBy('id').execute()).map((r) => r.word);
}

/** Adds words not already there (ignoring case); the first spelling given is kept. */
export async function addAlertWords(db: Queryable<ChatTables>, realmId: number, userId: number, words: string[]): Promise<void> {
  const have = new Set((await alertWords(db, userId)).map((w) => w.toLowerCase()));
  const rows = [];
  for (const word of words) {
    const lower = word.toLowerCase();
    if (have.has(lower)) continue;
    have.add(lower);
    rows.push({ realm_id: realmId, user_id: userId, word, word_lower: lower });
  }
  await checkRoom(db, 'alertWordsPerUser', userId, rows.length);
  if (rows.length) await db.insertInto('alert_words').values(rows).execute();
}

/** Removes the words, ignoring case; words the user does not have are ignored. */
export async function removeAlertWords(db: Queryable<ChatTables>, userId: number, words: string[]): Promise<void> {
  const lower = [...new Set(words.map((w) => w.toLowerCase()))];
  if (lower.length) await db.deleteFrom('alert_words').where('user_id', '=', userId).where('word_lower', 'in', lower).execute();
}

/** Whether `word` (lowercase) occurs in `text` (lowercase) standing apart, as the header describes. */
export function containsAlertWord(text: string, word: string): boolean {
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const end = at + word.length;
    if ((at === 0 || BEFORE.has(text[at - 1]!)) && (end >= text.length || AFTER.has(text[end]!))) return true;
  }
  return false;
}

interface TrieNode {
  next: Map<number, TrieNode>;
  /** The word that ends here, if one does. */
  word?: string;
}

/**
 * A realm's alert words (lowercase) by user: what every new message is matched against. They are
 * looked for all at once, in a trie walked from each place a word may start, so a message costs at
 * most its length times the longest word's, however many words (and users) the realm has: looked
 * for one by one, a user's 1,000 words cost 0.4 s on a 10,000-character message.
 */
export class RealmAlertWords {
  readonly byUser: ReadonlyMap<number, readonly string[]>;
  private readonly root: TrieNode = { next: new Map() };

  constructor(byUser: ReadonlyMap<number, readonly string[]>) {
    this.byUser = byUser;
    for (const words of byUser.values()) {
      for (const word of words) {
        let node = this.root;
        for (let i = 0; i < word.length; i++) {
          const c = word.charCodeAt(i);
          let child = node.next.get(c);
          if (!child) node.next.set(c, (child = { next: new Map() }));
          node = child;
        }
        node.word = word;
      }
    }
  }

  /** The words that occur in `text` (lowercase) standing apart, as the header describes. */
  found(text: string): Set<string> {
    const found = new Set<string>();
    for (let start = 0; start < text.length; start++) {
      if (start > 0 && !BEFORE.has(text[start - 1]!)) continue;
      let node: TrieNode | undefined = this.root;
      for (let i = start; i < text.length; ) {
        node = node.next.get(text.charCodeAt(i++));
        if (!node) break;
        if (node.word !== undefined && (i === text.length || AFTER.has(text[i]!))) found.add(node.word);
      }
    }
    return found;
  }
}

const realmCaches = new TableCache<RealmAlertWords>('alert_words');

/**
 * The realm's alert words. Every send needs them: kept per realm until this node writes alert_words
 * (or for the read cache's TTL, for other nodes' changes); inside a transaction they are read afresh.
 */
export async function realmAlertWords(db: Queryable<ChatTables>, realmId: number): Promise<RealmAlertWords> {
  const read = async () => {
    const byUser = new Map<number, string[]>();
    for (const r of await db.selectFrom('alert_words').select(['user_id', 'word_lower']).where('realm_id', '=', realmId).execute()) {
      const userId = Number(r.user_id);
      const mine = byUser.get(userId);
      if (mine) mine.push(r.word_lower);
      else byUser.set(userId, [r.word_lower]);
    }
    return new RealmAlertWords(byUser);
  };
  return realmCaches.get(db, String(realmId), read);
}

/**
 * The users among `candidates` with an alert word in `content`. The sender is never alerted by their
 * own message, so the caller leaves them out.
 */
export function usersAlerted(words: RealmAlertWords, content: string, candidates: Iterable<number>): Set<number> {
  const alerted = new Set<number>();
  if (!words.byUser.size) return alerted;
  const found = words.found(content.toLowerCase());
  if (!found.size) return alerted;
  for (const userId of candidates) {
    if (words.byUser.get(userId)?.some((w) => found.has(w))) alerted.add(userId);
  }
  return alerted;
}
