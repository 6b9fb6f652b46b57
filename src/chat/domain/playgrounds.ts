// Code playgrounds (Zulip's RealmPlayground): for a code block's language, a named link that opens
// the code elsewhere, made from an RFC 6570 URL template whose only variable is `code`. Checked as
// Zulip's view and model check them (zerver/views/realm_playgrounds.py, zerver/models/realm_playgrounds.py).
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import {
  playgroundBadLanguage,
  playgroundBadTemplate,
  playgroundBlankLanguage,
  playgroundBlankName,
  playgroundBlankTemplate,
  playgroundCodeMissing,
  playgroundCodeNotAlone,
  valueTooLong,
} from '../errors.js';
import type { Notice } from '../events/hub.js';

export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
const LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;

export interface PlaygroundInput {
  name: string;
  pygments_language: string;
  url_template: string;
}

// RFC 6570 (level 4): literals, and expressions of an optional operator and variables, each with a
// prefix (:n, 1 to 9999) or explode (*) modifier.
const LITERAL_FORBIDDEN = /[\u0000-\u0020"'<>\\^`{|}\u007f]/;
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$/;

/** The variables of an RFC 6570 URL template, or null when it is not one (as the uri_template package judges). */
export function templateVariables(template: string): Set<string> | null {
  const names = new Set<string>();
  let i = 0;
  while (i < template.length) {
    const ch = template[i];
    if (ch === '{') {
      const end = template.indexOf('}', i);
      if (end < 0) return null;
      let body = template.slice(i + 1, end);
      if (/^[+#./;?&]/.test(body)) body = body.slice(1);
      if (body === '') return null;
      for (const spec of body.split(',')) {
        const m = /^([^:*]+)(?::([1-9]\d{0,3})|\*)?$/.exec(spec);
        if (!m || !VARNAME.test(m[1])) return null;
        names.add(m[1]);
      }
      i = end + 1;
    } else if (ch === '%') {
      if (!/^%[0-9A-Fa-f]{2}/.test(template.slice(i))) return null;
      i += 3;
    } else {
      if (LITERAL_FORBIDDEN.test(ch)) return null;
      i += 1;
    }
  }
  return names;
}

/**
 * A new playground, trimmed, or the error Zulip answers: the language's length and characters
 * first, then the model's checks (the template, a blank name or language), then the template's
 * variables. The name must also be new for the language (checked where it is stored).
 */
export function checkPlayground(p: PlaygroundInput): PlaygroundInput {
  if ([...p.pygments_language].length > MAX_PYGMENTS_LANGUAGE_LENGTH) throw valueTooLong({ name: 'pygments_language', limit: MAX_PYGMENTS_LANGUAGE_LENGTH });
  if (!LANGUAGE.test(p.pygments_language)) throw playgroundBadLanguage();
  const out = { name: p.name.trim(), pygments_language: p.pygments_language.trim(), url_template: p.url_template.trim() };
  if (out.url_template === '') throw playgroundBlankTemplate();
  const variables = templateVariables(out.url_template);
  if (!variables) throw playgroundBadTemplate();
  if (out.name === '') throw playgroundBlankName();
  if (out.pygments_language === '') throw playgroundBlankLanguage();
  if (!variables.has('code')) throw playgroundCodeMissing();
  if (variables.size !== 1) throw playgroundCodeNotAlone();
  return out;
}

export async function playgroundObjects(db: Queryable<ChatTables>, realmId: number): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom('realm_playgrounds').select(['id', 'name', 'pygments_language', 'url_template']).where('realm_id', '=', realmId).orderBy('id').execute();
  return rows.map((r) => ({ id: Number(r.id), name: r.name, pygments_language: r.pygments_language, url_template: r.url_template }));
}

/** realm_playgrounds: the whole list again, to every active user. */
export async function playgroundsNotice(db: Queryable<ChatTables>, realmId: number): Promise<Notice[]> {
  const realm_playgrounds = await playgroundObjects(db, realmId);
  const users = await db.selectFrom('chat_users').select('id').where('realm_id', '=', realmId).where('is_active', '=', 1).execute();
  return [{ type: 'realm_playgrounds', userIds: users.map((u) => Number(u.id)), render: () => ({ type: 'realm_playgrounds', realm_playgrounds }) }];
}
