// Zulip's own Markdown test fixtures (../shared/reference/zulip-markdown-fixtures-10.2.json, taken from
// zerver/tests/fixtures/markdown_test_cases.json of Zulip 10.2), and the realm they assume: Zulip's test
// realm `zulip` at http://zulip.testserver, where Zoe is user 7. Located as zulip-openapi.ts locates
// the API description; absent, the caller skips with the printed reason (CI requires the file).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { referenceRequired } from './zulip-openapi.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ZULIP_MARKDOWN_FIXTURES_PATH = process.env.KEEL_TEST_ZULIP_MARKDOWN_FIXTURES
  ? path.resolve(process.env.KEEL_TEST_ZULIP_MARKDOWN_FIXTURES)
  : path.resolve(REPO_ROOT, '../shared/reference/zulip-markdown-fixtures-10.2.json');

export interface RegularFixture {
  name: string;
  input: string;
  expected_output: string;
  /** Zulip's server renders these only (inline image and video previews through its camo proxy). */
  backend_only_rendering?: boolean;
  /** Rendered for a sender whose translate_emoticons setting is on. */
  translate_emoticons?: boolean;
}

/** Zulip's linkify cases: [input, expected with %s for the link, the linked URL ('' when none)]. */
export type LinkifyFixture = [input: string, reference: string, url: string];

export interface ZulipMarkdownFixtures {
  regular_tests: RegularFixture[];
  linkify_tests: LinkifyFixture[];
}

/** The fixtures, or why they cannot be read (throws instead when the run requires the reference). */
export function loadZulipMarkdownFixtures(file = ZULIP_MARKDOWN_FIXTURES_PATH, env: NodeJS.ProcessEnv = process.env): ZulipMarkdownFixtures | string {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as ZulipMarkdownFixtures;
  const why = `Zulip's Markdown fixtures were looked for at ${file} (${env.KEEL_TEST_ZULIP_MARKDOWN_FIXTURES ? 'from KEEL_TEST_ZULIP_MARKDOWN_FIXTURES' : 'shared/reference/ beside the checkout'}) and are not there`;
  if (referenceRequired(env)) {
    throw new Error(`${why}: CI requires them (CI=true or KEEL_TEST_REQUIRE_REFERENCE=1). Put shared/ beside the checkout, or set KEEL_TEST_ZULIP_MARKDOWN_FIXTURES to the file.`);
  }
  return `${why}; Keel's rendering is not measured against Zulip's (CI requires the file)`;
}

/** What Zulip's test expects for a linkify case: the reference with the link put in, as Zulip's test builds it. */
export function expectedLinkify([, reference, url]: LinkifyFixture): string {
  if (!reference.includes('%s')) return reference;
  const href = url.startsWith('http') ? url : url.includes('@') ? `mailto:${url}` : `http://${url}`;
  return reference.replace('%s', `<a href="${href}">${url}</a>`);
}
