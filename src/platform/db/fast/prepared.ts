// Fast path "prepared queries" (README.md): hot selects built and compiled by Kysely once, then run
// with new values each time. For a point lookup, building the query tree and compiling it to SQL cost
// about as much as the lookup itself. Bench: bench/fast/prepared.ts.
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { rootBuilder, runRead } from '../database.js';

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
 * Wraps a select whose shape is fixed and whose arguments only become bound values (in where
 * clauses, limits). `build` runs once per database handle (its transactions share it), with
 * stand-ins for its arguments.
 */
export function preparedQuery<S, A extends unknown[], R>(build: (db: Kysely<S>, ...args: A) => Compilable<R>): (db: Kysely<S>, ...args: A) => Promise<R[]> {
  // A pure memo of compilation, allowed at this level: the SQL a store's builder (its dialect) makes
  // of this fixed shape, by builder since dialects differ; it goes with the builder.
  const compiled = new WeakMap<Kysely<S>, CompiledQuery<R>>();
  // Not an async function: it would wrap runRead's promise in one more, a few microtask turns later.
  return (db, ...args) => {
    try {
      if (args.length > MAX_ARGS) throw new Error(`a prepared query takes at most ${MAX_ARGS} arguments`);
      const root = rootBuilder(db);
      let query = compiled.get(root);
      if (!query) {
        query = build(root, ...(PLACEHOLDERS as unknown as A)).compile();
        // Plugins see a query when it is compiled, once here: a write would pass the store's write
        // counter (database.ts) once, not on every run, and caches would miss its later runs.
        if (query.query.kind !== 'SelectQueryNode') throw new Error('a prepared query must be a select');
        compiled.set(root, query);
      }
      const parameters = query.parameters.map((p) => (p instanceof Placeholder ? args[p.index] : p));
      return runRead(db, query, parameters);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}
