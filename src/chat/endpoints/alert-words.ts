// Alert words: GET, POST and DELETE /users/me/alert_words. Each change answers with the whole list and
// sends it to the user's own clients as an alert_words event.
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { addAlertWords, alertWords, cleanAlertWords, removeAlertWords } from '../domain/alert-words.js';
import { alertWordsNotice } from '../events/notices.js';

export const getAlertWords = defineEndpoint({
  method: 'GET',
  path: '/users/me/alert_words',
  summary: 'Get all alert words',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    return { alert_words: await alertWords(call.services.db.kysely, requireUser(call).id) };
  },
});

const Words = Type.Object({ alert_words: Type.Array(Type.String()) });

/** Applies a change to the caller's words in one transaction; answers and announces the new list. */
async function changeWords(call: ChatCall, given: string[], apply: (db: Queryable<ChatTables>, userId: number, words: string[]) => Promise<void>) {
  const me = requireUser(call);
  const { db, events } = call.services;
  const words = cleanAlertWords(given);
  const list = await events.write(
    () =>
      db.transaction(async (trx) => {
        await apply(trx, me.id, words);
        return alertWords(trx, me.id);
      }),
    (after) => alertWordsNotice(me.id, after),
  );
  return { alert_words: list };
}

export const addAlertWordsEndpoint = defineEndpoint({
  method: 'POST',
  path: '/users/me/alert_words',
  summary: 'Add alert words',
  auth: 'user',
  params: Words,
  handler: (call, p) => changeWords(call, p.alert_words, (db, userId, words) => addAlertWords(db, call.realm.id, userId, words)),
});

export const removeAlertWordsEndpoint = defineEndpoint({
  method: 'DELETE',
  path: '/users/me/alert_words',
  summary: 'Remove alert words',
  auth: 'user',
  params: Words,
  handler: (call, p) => changeWords(call, p.alert_words, removeAlertWords),
});
