// Fast path "generated row builders" (README.md): a direct read's rows are made in JavaScript from
// better-sqlite3's arrays, by one object literal generated per column list. Bench: bench/fast/row-builders.ts.
import type BetterSqlite3 from 'better-sqlite3';

/** Makes one row object from what better-sqlite3 returned: the row's values, or the one value of a one-column select. */
type RowBuilder = (values: unknown) => Record<string, unknown>;

interface RowShape {
  /** One column: read with pluck(), each row is its bare value (cheaper still than an array). */
  single: boolean;
  build: RowBuilder;
}

// Module-level on purpose: both memoize pure compilation of immutable things (a prepared statement's
// column list, a row builder per list of column names), the same for every store; no store's state.
const shapes = new WeakMap<BetterSqlite3.Statement, RowShape>();
const buildersByColumns = new Map<string, RowBuilder>();

/**
 * A function that makes a row object in one object literal, generated once per list of column names
 * (JSON-quoted, so any name is safe; "__proto__" as a computed key, which makes an own property).
 * Assigning the columns one by one through a variable key goes through V8's megamorphic keyed store
 * for every column of every row; a literal is made from one fixed shape, and the rows of a statement
 * share it, so the code reading them stays monomorphic. A repeated name keeps its last value, as
 * assignment would.
 */
function rowBuilder(names: string[]): RowBuilder {
  const key = names.join('\u0000');
  let build = buildersByColumns.get(key);
  if (!build) {
    const value = (i: number) => (names.length === 1 ? 'v' : `v[${i}]`);
    const members = names.map((n, i) => `${n === '__proto__' ? `[${JSON.stringify(n)}]` : JSON.stringify(n)}: ${value(i)}`);
    build = new Function('v', `return { ${members.join(', ')} };`) as RowBuilder;
    buildersByColumns.set(key, build);
  }
  return build;
}

/**
 * The rows of a select as objects, built here from better-sqlite3's arrays: it builds an object row
 * property by property from C++, through a slow path of V8's, and for a page of a hundred rows that
 * costs more than SQLite's own work. better-sqlite3's raw() and pluck() modes are switched on only for
 * the one call. Column names are read once per statement: the schema does not change while serving
 * (migrations run at open).
 */
export function objectRows(stmt: BetterSqlite3.Statement, parameters: readonly unknown[]): Record<string, unknown>[] {
  let shape = shapes.get(stmt);
  if (!shape) {
    const names = stmt.columns().map((c) => c.name);
    shapes.set(stmt, (shape = { single: names.length === 1, build: rowBuilder(names) }));
  }
  const { single, build } = shape;
  if (single) stmt.pluck(true);
  else stmt.raw(true);
  let rows: unknown[];
  try {
    rows = stmt.all(parameters);
  } finally {
    // The statement is shared with Kysely's driver, which expects objects.
    if (single) stmt.pluck(false);
    else stmt.raw(false);
  }
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) out[r] = build(rows[r]);
  return out;
}
