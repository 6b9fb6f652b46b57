// FOR THIS BRANCH ALONE (i16-exports): versions 27 to 32 belong to other branches of issue 16
// (uploads, tus, scheduled, invites, orgdata, misc) and migrations must be numbered without gaps, so
// these empty stand-ins let migration 33 run here. The lead drops this file and its lines in
// index.ts (revert the commit that added them) when merging: the real 27 to 32 take their places.
import type { Migration } from '../../platform/db/migrate.js';

export const placeholders27to32: Migration[] = [27, 28, 29, 30, 31, 32].map((version) => ({ version, name: `placeholder ${version} (branch i16-exports only)`, up: () => [] }));
