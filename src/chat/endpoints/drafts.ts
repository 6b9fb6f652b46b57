// Drafts synchronised between a user's clients: GET/POST /drafts, PATCH/DELETE /drafts/{draft_id};
// each change is a drafts event to the user's queues.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { checkDraft, checkDraftsEnabled, draftObject, draftsOf, type CheckedDraft, type DraftInput } from '../domain/drafts.js';
import { draftMissing } from '../errors.js';
import { draftsNotice } from '../events/pref-notices.js';
import { checkBatchSize, checkRoom } from '../domain/bounds.js';

const Draft = Type.Object(
  {
    // Zulip ignores an id sent inside a draft.
    id: Type.Optional(Type.Integer()),
    type: Type.Union([Type.Literal(''), Type.Literal('stream'), Type.Literal('private')]),
    to: Type.Array(Type.Integer()),
    topic: Type.String(),
    content: Type.String(),
    timestamp: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

export const getDrafts = defineEndpoint({
  method: 'GET',
  path: '/drafts',
  summary: 'Get drafts',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    checkDraftsEnabled(me);
    const drafts = await draftsOf(call.services.db.kysely, me.id);
    return { count: drafts.length, drafts };
  },
});

export const createDrafts = defineEndpoint({
  method: 'POST',
  path: '/drafts',
  summary: 'Create drafts',
  auth: 'user',
  // Required, as Zulip's create_drafts has it: without `drafts` the answer is REQUEST_VARIABLE_MISSING.
  params: Type.Object({ drafts: Type.Array(Draft) }),
  async handler(call, p) {
    const me = requireUser(call);
    checkDraftsEnabled(me);
    const { db, events, clock } = call.services;
    const now = Math.floor(clock.now() / 1000);
    checkBatchSize('draftsPerUser', p.drafts.length);
    const checked: CheckedDraft[] = [];
    for (const d of p.drafts) checked.push(await checkDraft(db.kysely, me, d as DraftInput, now));
    const made = await events.write(
      () =>
        db.transaction(async (trx) => {
          await checkRoom(trx, 'draftsPerUser', me.id, checked.length);
          const rows = [];
          for (const c of checked)
            rows.push(
              await trx
                .insertInto('drafts')
                .values({ user_id: me.id, ...c })
                .returningAll()
                .executeTakeFirstOrThrow(),
            );
          return rows;
        }),
      (rows) => (rows.length ? [draftsNotice(me.id, { op: 'add', drafts: rows.map(draftObject) })] : []),
    );
    return { ids: made.map((r) => Number(r.id)) };
  },
});

export const editDraft = defineEndpoint({
  method: 'PATCH',
  path: '/drafts/{draft_id}',
  summary: 'Edit a draft',
  auth: 'user',
  params: Type.Object({ draft_id: Type.Integer(), draft: Draft }),
  async handler(call, p) {
    const me = requireUser(call);
    checkDraftsEnabled(me);
    const { db, events, clock } = call.services;
    const checked = await checkDraft(db.kysely, me, p.draft as DraftInput, Math.floor(clock.now() / 1000));
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const row = await trx.updateTable('drafts').set(checked).where('id', '=', p.draft_id).where('user_id', '=', me.id).returningAll().executeTakeFirst();
          if (!row) throw draftMissing();
          return row;
        }),
      (row) => [draftsNotice(me.id, { op: 'update', draft: draftObject(row) })],
    );
    return {};
  },
});

export const deleteDraft = defineEndpoint({
  method: 'DELETE',
  path: '/drafts/{draft_id}',
  summary: 'Delete a draft',
  auth: 'user',
  params: Type.Object({ draft_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    checkDraftsEnabled(me);
    const { db, events } = call.services;
    await events.write(
      async () => {
        const r = await db.kysely.deleteFrom('drafts').where('id', '=', p.draft_id).where('user_id', '=', me.id).executeTakeFirst();
        if (Number(r.numDeletedRows) === 0) throw draftMissing();
      },
      () => [draftsNotice(me.id, { op: 'remove', draft_id: p.draft_id })],
    );
    return {};
  },
});
