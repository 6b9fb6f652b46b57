// Migration 24 on a store set up before it: the first customer (keel init's, the operator's) becomes a
// reseller and may make sub-customers at once; customers made later are not; the new fields start empty.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage } from '../helpers/server.js';
import { openDatabase } from '../../src/platform/db/open.js';
import { MIGRATIONS } from '../../src/app.js';
import { infraCustomers } from '../../src/infra/migrations/024_customers.js';

await forEachEngine('migration 24 (sub-customers)', (engine) => {
  it('makes the first customer of an older store a reseller, and no other', async () => {
    const storage = await createStorage(engine);
    try {
      const where = { dataDir: storage.dataDir, databaseUrl: storage.databaseUrl };
      const old = await openDatabase<any>({ ...where, migrations: MIGRATIONS.filter((m) => m.version < infraCustomers.version) });
      try {
        for (const name of ['Operator', 'Later'])
          await old.kysely
            .insertInto('customers')
            .values({ company_name: name, std_name: name.toUpperCase(), status: 'ACTIVE', parent_id: null, currency: 'AUD', date_created: 0, date_modified: 0 })
            .execute();
      } finally {
        await old.close();
      }
      const now = await openDatabase<any>({ ...where, migrations: MIGRATIONS });
      try {
        const rows = await now.kysely.selectFrom('customers').select(['company_name', 'is_reseller', 'company_abn', 'company_acn', 'custom_id']).orderBy('id').execute();
        assert.deepEqual(
          rows.map((r: Record<string, unknown>) => ({ ...r, is_reseller: Number(r.is_reseller) })),
          [
            { company_name: 'Operator', is_reseller: 1, company_abn: '', company_acn: '', custom_id: '' },
            { company_name: 'Later', is_reseller: 0, company_abn: '', company_acn: '', custom_id: '' },
          ],
        );
      } finally {
        await now.close();
      }
    } finally {
      await storage.dispose();
    }
  });
});
