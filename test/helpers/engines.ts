// Runs a suite once per storage engine: SQLite always, PostgreSQL when it is reachable.
import { describe } from 'node:test';
import { postgresUnavailable } from './postgres.js';

export type EngineName = 'sqlite' | 'postgres';

export async function forEachEngine(title: string, suite: (engine: EngineName) => void): Promise<void> {
  describe(`${title} [sqlite]`, () => suite('sqlite'));
  const why = await postgresUnavailable();
  if (why) {
    console.log(`# skipping "${title} [postgres]": ${why}`);
    describe(`${title} [postgres]`, { skip: why }, () => {});
  } else {
    describe(`${title} [postgres]`, () => suite('postgres'));
  }
}
