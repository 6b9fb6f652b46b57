// FOR THIS BRANCH ALONE (i16-orgdata): versions 27 to 30 belong to other branches of issue 16
// (uploads, tus, scheduled, invites) and migrations must be numbered without gaps, so these empty
// stand-ins let migration 31 run here. The lead drops this file (027_030_branch_placeholders.ts) and its line in index.ts (revert
// the commit that added them) when merging: the real 27 to 30 take their places.
import type { Migration } from '../../platform/db/migrate.js';

export const placeholders27to30: Migration[] = [27, 28, 29, 30].map((version) => ({ version, name: `placeholder ${version} (branch i16-orgdata only)`, up: () => [] }));
