// customer.*: the caller's own customer account.
import Type from 'typebox';
import { defineCommand, requirePrincipal, type Command } from '../command.js';
import { infraErrors } from '../errors.js';

export const customerCommands: Command[] = [
  defineCommand({
    cmd: 'customer.get',
    summary: "The caller's customer account",
    rest: { method: 'GET', path: '/customers/{id}' },
    params: Type.Object({ id: Type.Optional(Type.Integer({ minimum: 1, description: "customer id; defaults to the caller's" })) }),
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      // Another customer's id answers exactly like one that does not exist.
      if (p.id !== undefined && p.id !== customerId) throw infraErrors.customerNotFound();
      const db = call.services.db.kysely;
      const c = await db.selectFrom('customers').selectAll().where('id', '=', customerId).executeTakeFirst();
      if (!c) throw infraErrors.customerNotFound();
      const parent = c.parent_id === null ? undefined : await db.selectFrom('customers').select('std_name').where('id', '=', c.parent_id).executeTakeFirst();
      const customer = {
        id: c.id,
        companyName: c.company_name,
        stdName: c.std_name,
        firstName: c.first_name,
        lastName: c.last_name,
        email: c.email,
        companyABN: '',
        companyACN: '',
        customID: '',
        status: c.status,
        parentID: c.parent_id ?? 0,
        parentStdName: parent?.std_name ?? '',
        dateCreated: c.date_created,
        dateModified: c.date_modified,
        currency: c.currency,
        isreseller: false,
        locations: [],
      };
      return { message: 'Customer Retrieved Successfully', data: customer, top: { customer } };
    },
  }),
];
