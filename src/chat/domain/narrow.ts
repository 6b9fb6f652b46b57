// Narrows: both wire forms (objects with operator/operand/negated, and legacy [operator, operand]
// pairs) read into terms, then into SQL conditions over messages m left-joined to the caller's
// user_messages um (receipt.ts says who received what). A channel term searches the channel's
// shared history when the caller may.
import { sql, type RawBuilder } from 'kysely';
import type { Engine, Queryable } from '../../platform/db/database.js';
import { searchCondition } from '../../platform/db/fulltext.js';
import type { ChatTables, ChatUser } from '../tables.js';
import {
  narrowBadChannelsOperand,
  narrowChannelAndDm,
  narrowBadMessageId,
  narrowBadNear,
  narrowBadSearch,
  narrowBadTopic,
  narrowBadWith,
  narrowGuestAllPublic,
  narrowUnknownChannel,
  narrowUnknownHas,
  narrowUnknownIn,
  narrowUnknownIs,
  narrowUnknownOperator,
  narrowUnknownUser,
  narrowUnknownWebPublicChannel,
} from '../errors.js';
import { canAccessContent, streamById, streamByName } from './channels.js';
import { FLAG } from './flags.js';
import { normaliseTopic } from './topics.js';
import { userByEmail, userById } from './users.js';
import { isGuest } from './roles.js';
import { isSpectator } from './spectators.js';
import { highlightWords, parseSearch } from './search.js';
import { flagsSql } from './receipt.js';
import { followedSql, mutedSql, mutedTopicSql } from './muting.js';

export interface NarrowTerm {
  operator: string;
  operand: unknown;
  negated: boolean;
}

export type RawNarrow = (string[] | { operator: string; operand: unknown; negated?: boolean })[];

export function readNarrow(raw: RawNarrow): NarrowTerm[] {
  return raw.map((t) => {
    if (Array.isArray(t)) {
      const [operator, operand] = t;
      const negated = operator.startsWith('-');
      return { operator: negated ? operator.slice(1) : operator, operand, negated };
    }
    return { operator: t.operator, operand: t.operand, negated: t.negated === true };
  });
}

export interface NarrowQuery {
  /** Conditions, all of which must hold. */
  conditions: RawBuilder<unknown>[];
  /** Whether messages the caller never received may match (shared channel history). */
  history: boolean;
  /** The channel a (non-negated) channel term confines the narrow to, of the caller's realm. */
  channelId?: number;
  /** The channels whose shared history the caller may read, when already known (reader-cache.ts). */
  historyStreamIds?: readonly number[];
  /**
   * Present when the narrow has a search term: the words to highlight in match_content and
   * match_subject (those of non-negated terms; a negated search highlights nothing).
   */
  search?: Set<string>;
}

async function userFor(db: Queryable<ChatTables>, realmId: number, operand: unknown): Promise<ChatUser> {
  const u =
    typeof operand === 'number'
      ? await userById(db, realmId, operand)
      : typeof operand === 'string' && /^\d+$/.test(operand.trim())
        ? await userById(db, realmId, Number(operand))
        : typeof operand === 'string'
          ? await userByEmail(db, realmId, operand)
          : undefined;
  if (!u) throw narrowUnknownUser({ operand: String(operand) });
  return u;
}

/** The recipient key of a direct conversation: the sorted ids of everyone in it. */
export function directKey(ids: number[]): string {
  return [...new Set(ids)].sort((a, b) => a - b).join(',');
}

/**
 * The kind of conversation a term confines a narrow to, as Zulip's narrow builder reads it: channel,
 * channels and topic terms to channel messages, dm and is:dm to direct ones; a negated term confines
 * nothing, except `-is:dm`, which leaves only channel messages.
 */
function confinesTo(term: NarrowTerm): 'channel' | 'dm' | undefined {
  const { operator, operand } = term;
  const isDm = operator === 'is' && (operand === 'dm' || operand === 'private');
  if (term.negated) return isDm ? 'channel' : undefined;
  if (isDm || operator === 'dm' || operator === 'pm-with') return 'dm';
  if (CHANNEL_OPERATORS.has(operator)) return 'channel';
  return undefined;
}

const CHANNEL_OPERATORS = new Set(['channel', 'stream', 'channels', 'streams', 'topic', 'subject']);

/** The engine picks the full-text SQL of `search` terms; everything else is the same on both. */
export async function buildNarrow(db: Queryable<ChatTables>, engine: Engine, realmId: number, me: ChatUser, terms: NarrowTerm[]): Promise<NarrowQuery> {
  const conditions: RawBuilder<unknown>[] = [];
  let history = false;
  let search: Set<string> | undefined;
  let channelId: number | undefined;
  const flags = flagsSql(me.id);
  const kinds = new Set<'channel' | 'dm'>();
  for (const term of terms) {
    let cond: RawBuilder<unknown>;
    const { operator, operand } = term;
    const kind = confinesTo(term);
    if (kind) {
      kinds.add(kind);
      // A channel term with a dm term matches nothing: Zulip refuses the narrow rather than answer empty.
      if (kinds.size > 1) throw narrowChannelAndDm();
    }
    switch (operator) {
      case 'channel':
      case 'stream': {
        const byId = typeof operand === 'number' || (typeof operand === 'string' && /^\d+$/.test(operand));
        const stream = byId ? await streamById(db, realmId, Number(operand)) : typeof operand === 'string' ? await streamByName(db, realmId, operand) : undefined;
        if (!stream || !(await canAccessContent(db, me, stream))) throw isSpectator(me) ? narrowUnknownWebPublicChannel({ operand: String(operand) }) : narrowUnknownChannel();
        cond = sql`m.stream_id = ${stream.id}`;
        if (!term.negated) channelId = stream.id;
        if (!term.negated && stream.history_public_to_subscribers === 1) history = true;
        break;
      }
      case 'channels':
      case 'streams': {
        if (operand === 'web-public') {
          // Anyone may read these (spectators only these): channels:web-public is how a spectator's query says what it is.
          cond = sql`m.stream_id in (select id from streams where realm_id = ${realmId} and is_web_public = 1)`;
        } else {
          if (operand !== 'public') throw narrowBadChannelsOperand({ operand: String(operand) });
          if (isGuest(me.role)) throw narrowGuestAllPublic();
          cond = sql`m.stream_id in (select id from streams where realm_id = ${realmId} and invite_only = 0)`;
        }
        if (!term.negated) history = true;
        break;
      }
      case 'topic':
      case 'subject': {
        if (typeof operand !== 'string') throw narrowBadTopic();
        cond = sql`m.stream_id is not null and lower(m.topic) = lower(${normaliseTopic(operand)})`;
        break;
      }
      case 'sender': {
        const who = operand === 'me' ? me : await userFor(db, realmId, operand);
        cond = sql`m.sender_id = ${who.id}`;
        break;
      }
      case 'dm-including':
      case 'group-pm-with': {
        // Direct conversations (group ones for the legacy group-pm-with) that include this user.
        const who = operand === 'me' ? me : await userFor(db, realmId, operand);
        const keys = await db.selectFrom('recipients').select(['id', 'direct_key']).where('kind', '=', 'direct').execute();
        const ids = keys
          .filter((k) => {
            const members = (k.direct_key ?? '').split(',').map(Number);
            return members.includes(who.id) && members.includes(me.id) && (operator === 'dm-including' || members.length > 2);
          })
          .map((k) => k.id);
        cond = ids.length ? sql`m.stream_id is null and m.recipient_id in (${sql.join(ids)})` : sql`1 = 0`;
        break;
      }
      case 'near':
        // near only moves the anchor in Zulip's clients; it filters nothing.
        if (!Number.isInteger(Number(operand))) throw narrowBadNear();
        continue;
      case 'with': {
        // The conversation the message is in now (a channel topic, or its direct conversation).
        const id = Number(operand);
        const msg = Number.isInteger(id)
          ? await db.selectFrom('messages').select(['stream_id', 'topic', 'recipient_id']).where('id', '=', id).where('realm_id', '=', realmId).executeTakeFirst()
          : undefined;
        if (!msg) throw narrowBadWith({ operand: String(operand) });
        cond = msg.stream_id === null ? sql`m.recipient_id = ${msg.recipient_id}` : sql`m.stream_id = ${msg.stream_id} and lower(m.topic) = ${msg.topic.toLowerCase()}`;
        if (msg.stream_id !== null && !term.negated) history = true;
        break;
      }
      case 'in': {
        if (operand === 'all') cond = sql`1 = 1`;
        // The home view leaves out muted topics, and muted channels unless the narrow names a channel (Zulip's rule).
        else if (operand === 'home') cond = terms.some((t) => t.operator === 'channel' || t.operator === 'stream') ? sql`not ${mutedTopicSql(me.id)}` : sql`not ${mutedSql(me.id)}`;
        else throw narrowUnknownIn({ operand: String(operand) });
        break;
      }
      case 'has': {
        switch (operand) {
          case 'link':
            cond = sql`m.rendered_content like ${'%<a %'}`;
            break;
          case 'image':
            cond = sql`m.rendered_content like ${'%class="message_inline_image"%'}`;
            break;
          case 'attachment':
            cond = sql`m.rendered_content like ${'%/user_uploads/%'}`;
            break;
          case 'reaction':
            cond = sql`exists (select 1 from reactions r where r.message_id = m.id)`;
            break;
          default:
            throw narrowUnknownHas({ operand: String(operand) });
        }
        break;
      }
      case 'dm':
      case 'pm-with': {
        const parts = Array.isArray(operand)
          ? operand
          : typeof operand === 'string'
            ? operand
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean)
            : [operand];
        const ids = [];
        for (const part of parts) ids.push((await userFor(db, realmId, part)).id);
        const key = directKey([...ids, me.id]);
        cond = sql`m.stream_id is null and m.recipient_id in (select id from recipients where direct_key = ${key})`;
        break;
      }
      case 'id': {
        const id = Number(operand);
        if (!Number.isInteger(id)) throw narrowBadMessageId();
        cond = sql`m.id = ${id}`;
        break;
      }
      case 'is': {
        switch (operand) {
          case 'dm':
          case 'private':
            cond = sql`m.stream_id is null`;
            break;
          case 'starred':
            cond = sql`(${flags} & ${FLAG.starred}) <> 0`;
            break;
          case 'unread':
            cond = sql`(${flags} & ${FLAG.read}) = 0`;
            break;
          case 'mentioned':
            cond = sql`(${flags} & ${FLAG.mentioned | FLAG.stream_wildcard_mentioned | FLAG.topic_wildcard_mentioned}) <> 0`;
            break;
          case 'alerted':
            cond = sql`(${flags} & ${FLAG.has_alert_word}) <> 0`;
            break;
          // A resolved topic starts with the check mark and a space.
          case 'resolved':
            cond = sql`m.stream_id is not null and m.topic like ${'✔ %'}`;
            break;
          case 'followed':
            cond = followedSql(me.id);
            break;
          case 'muted':
            cond = mutedSql(me.id);
            break;
          default:
            throw narrowUnknownIs({ operand: String(operand) });
        }
        break;
      }
      case 'search': {
        if (typeof operand !== 'string') throw narrowBadSearch();
        const groups = parseSearch(operand);
        cond = searchCondition(engine, groups);
        search ??= new Set();
        if (!term.negated) for (const w of highlightWords(groups)) search.add(w);
        break;
      }
      default:
        throw narrowUnknownOperator({ operator });
    }
    conditions.push(term.negated ? sql`not (${cond})` : cond);
  }
  const out: NarrowQuery = { conditions, history };
  if (search) out.search = search;
  if (channelId !== undefined) out.channelId = channelId;
  return out;
}
