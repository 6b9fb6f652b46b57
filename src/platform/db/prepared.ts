// Hot queries built and compiled by Kysely once, then run with new values each time. For a point
// lookup, building the query tree and compiling it to SQL cost about as much as the lookup itself.
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { runRead } from './database.js';

/** Stands in for the i-th argument while the query is built; replaced in the compiled parameters. */
class Placeholder {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
}

const MAX_ARGS = 8;
const PLACEHOLDERS = Array.from({ length: MAX_ARGS }, (_, i) => new Placeholder(i));

/**
 * Wraps a query whose shape is fixed and whose arguments only become bound values (in where clauses,
 * limits, inserted values). `build` runs once per database handle, with stand-ins for its arguments.
 */
export function preparedQuery<S, A extends unknown[], R>(build: (db: Kysely<S>, ...args: A) => Compilable<R>): (db: Kysely<S>, ...args: A) => Promise<R[]> {
  const compiled = new WeakMap<Kysely<S>, CompiledQuery<R>>();
  return async (db, ...args) => {
    if (args.length > MAX_ARGS) throw new Error(`a prepared query takes at most ${MAX_ARGS} arguments`);
    let query = compiled.get(db);
    if (!query) {
      query = build(db, ...(PLACEHOLDERS as unknown as A)).compile();
      compiled.set(db, query);
    }
    const parameters = query.parameters.map((p) => (p instanceof Placeholder ? args[p.index] : p));
    const bound = { ...query, parameters };
    return query.query.kind === 'SelectQueryNode' ? runRead(db, bound) : (await db.executeQuery<R>(bound)).rows;
  };
}
