// Read snapshots (src/platform/db/fast/README.md): point reads sharing one read transaction per
// event-loop turn (TurnSnapshot), against each read in SQLite's autocommit, which takes and drops the
// file locks around every statement.
import { TurnSnapshot } from '../../src/platform/db/fast/turn-snapshot.js';
import type { Benchmark } from '../lib.js';
import { compare, itemId, withSqlite } from '../micro.js';

const PER_TURN = 10;

export const benchmark: Benchmark = {
  name: 'fast/read-snapshot',
  summary: `point select by id, ${PER_TURN} per event-loop turn: in the turn's snapshot vs autocommit, same statement, SQLite WAL file`,
  run: () =>
    withSqlite(async (_store, raw) => {
      const stmt = raw.prepare('select * from items where id = ?');
      const snapshot = new TurnSnapshot(raw);
      return compare({
        unit: 'reads',
        perTurn: PER_TURN,
        plain: (i) => stmt.get(itemId(i)),
        fast: (i) => {
          snapshot.begin();
          return stmt.get(itemId(i));
        },
        detail: `${PER_TURN} reads per turn`,
      });
    }),
};
