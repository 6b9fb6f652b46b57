// Concurrent identical writes (ten clients creating one channel at once) meet the store's unique
// keys: on PostgreSQL two transactions both find no row, both insert, and the later insert fails
// on the unique index once the first commits. The request that lost the race is run again: its
// write rolled back whole, and the new run sees the committed
// row, so it answers as the same request sent afterwards does ("already exists", or success for an
// idempotent request). One mechanism for every endpoint, rather than a catch at each insert.
// The rule every handler keeps for this: nothing it writes commits before its last write that can
// meet a unique key (one transaction, or the others after it insert on no unique key; a topic move
// makes its notification bot before the edit: endpoints/message-edits.ts, test/chat/endpoints/edit-races.test.ts).
import { isUniqueViolation } from '../platform/db/database.js';

/**
 * Runs beyond the first, each after a lost race. A second loss needs yet another concurrent writer
 * of the same key to commit between the retry's read and its insert; past this the fault stands.
 */
const RERUNS = 2;

/** Reruns `run` while it fails on a unique key; `err` is what the first run threw. */
export async function rerunAfterRace<T>(err: unknown, run: () => Promise<T>): Promise<T> {
  for (let left = RERUNS; ; left--) {
    if (left === 0 || !isUniqueViolation(err)) throw err;
    try {
      return await run();
    } catch (again) {
      err = again;
    }
  }
}
