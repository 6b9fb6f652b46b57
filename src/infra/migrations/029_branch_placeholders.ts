// BRANCH ONLY, drop at merge: empty stand-ins for the versions between main's last (28) and this
// branch's (40), which the runner requires to be gapless. The lead renumbers 040 at merge.
import type { Migration } from '../../platform/db/migrate.js';

export const branchPlaceholders: Migration[] = Array.from({ length: 11 }, (_, i) => ({ version: 29 + i, name: `placeholder ${29 + i}`, up: () => [] }));
