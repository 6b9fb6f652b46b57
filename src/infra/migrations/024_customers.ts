// Customers of customers (issue 15): a reseller or partner makes sub-customers (customers.parent_id)
// and acts for them. is_reseller says who may; the first customer (`keel init`'s, the operator's) is
// one. The provider's customer object also carries ABN, ACN and a customer-chosen id (customID).
import type { Migration } from '../../platform/db/migrate.js';

export const infraCustomers: Migration = {
  version: 24,
  name: 'infra sub-customers',
  up: (t) => [
    // 1: may make sub-customers (customer.create); 0: may not.
    'ALTER TABLE customers ADD COLUMN is_reseller INTEGER NOT NULL DEFAULT 0',
    `ALTER TABLE customers ADD COLUMN company_abn ${t.text} NOT NULL DEFAULT ''`,
    `ALTER TABLE customers ADD COLUMN company_acn ${t.text} NOT NULL DEFAULT ''`,
    `ALTER TABLE customers ADD COLUMN custom_id ${t.text} NOT NULL DEFAULT ''`,
    // Scoping walks the tree downwards (customer-scope.ts) and bounds count a customer's children.
    'CREATE INDEX customers_parent ON customers (parent_id, id)',
    // A store set up before this version: its first customer is the operator's.
    'UPDATE customers SET is_reseller = 1 WHERE id = (SELECT MIN(id) FROM customers)',
  ],
};
