// Saved snippets: GET/POST /saved_snippets, PATCH/DELETE /saved_snippets/{saved_snippet_id}; each
// change is a saved_snippets event to the user's queues.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { savedSnippetMissing } from '../errors.js';
import { checkContent, checkTitle, snippetObject, snippetsNotice, snippetsOf } from '../domain/saved-snippets.js';
import { checkRoom } from '../domain/bounds.js';
import { unixSeconds } from '../../platform/clock.js';

export const getSavedSnippets = defineEndpoint({
  method: 'GET',
  path: '/saved_snippets',
  summary: 'Get all saved snippets',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    return { saved_snippets: await snippetsOf(call.services.db.kysely, requireUser(call).id) };
  },
});

export const createSavedSnippet = defineEndpoint({
  method: 'POST',
  path: '/saved_snippets',
  summary: 'Create a saved snippet',
  auth: 'user',
  params: Type.Object({ title: Type.String(), content: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const title = checkTitle(p.title);
    const content = checkContent(p.content);
    const { db, events } = call.services;
    const row = await events.write(
      () =>
        db.transaction(async (trx) => {
          await checkRoom(trx, 'savedSnippetsPerUser', me.id, 1);
          return trx
            .insertInto('saved_snippets')
            .values({ realm_id: call.realm.id, user_id: me.id, title, content, date_created: unixSeconds(call.services.clock) })
            .returningAll()
            .executeTakeFirstOrThrow();
        }),
      (made) => snippetsNotice(me.id, { op: 'add', saved_snippet: snippetObject(made) }),
    );
    return { saved_snippet_id: Number(row.id) };
  },
});

export const editSavedSnippet = defineEndpoint({
  method: 'PATCH',
  path: '/saved_snippets/{saved_snippet_id}',
  summary: 'Edit a saved snippet',
  auth: 'user',
  params: Type.Object({ saved_snippet_id: Type.Integer(), title: Type.Optional(Type.String()), content: Type.Optional(Type.String()) }),
  async handler(call, p) {
    const me = requireUser(call);
    const title = p.title === undefined ? undefined : checkTitle(p.title);
    const content = p.content === undefined ? undefined : checkContent(p.content);
    const { db, events } = call.services;
    // Nothing asked: Zulip answers success and announces nothing (even for a snippet that does not exist).
    if (title === undefined && content === undefined) return {};
    await events.write(
      async () => {
        const row = await db.kysely
          .updateTable('saved_snippets')
          .set({ ...(title === undefined ? {} : { title }), ...(content === undefined ? {} : { content }) })
          .where('id', '=', p.saved_snippet_id)
          .where('user_id', '=', me.id)
          .returningAll()
          .executeTakeFirst();
        if (!row) throw savedSnippetMissing();
        return row;
      },
      (row) => snippetsNotice(me.id, { op: 'update', saved_snippet: snippetObject(row) }),
    );
    return {};
  },
});

export const deleteSavedSnippet = defineEndpoint({
  method: 'DELETE',
  path: '/saved_snippets/{saved_snippet_id}',
  summary: 'Delete a saved snippet',
  auth: 'user',
  params: Type.Object({ saved_snippet_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    await events.write(
      async () => {
        const r = await db.kysely.deleteFrom('saved_snippets').where('id', '=', p.saved_snippet_id).where('user_id', '=', me.id).executeTakeFirst();
        if (Number(r.numDeletedRows) === 0) throw savedSnippetMissing();
      },
      () => snippetsNotice(me.id, { op: 'remove', saved_snippet_id: p.saved_snippet_id }),
    );
    return {};
  },
});
