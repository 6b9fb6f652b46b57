// The request target split into its raw (still percent-encoded) path and its query, as the WHATWG URL
// parser reads them (up to the escapes it would add, which decoding a segment undoes); the usual
// plain target is split by hand, without building a URL.

export interface Target {
  path: string;
  /** The text after `?`, without a fragment; empty when there is none. */
  query: string;
}

// What the URL parser would rewrite in a path: "." and ".." segments (encoded too) and backslashes.
// Rare, so those requests, absolute-form targets and fragments take the WHATWG parser.
const NEEDS_URL_PARSER = /\/(?:\.|%2e)|\\|#/i;

/** The path and query of a request target; undefined when it cannot be parsed (`http://[`): the client's error. */
export function splitTarget(target: string): Target | undefined {
  const q = target.indexOf('?');
  let path = q < 0 ? target : target.slice(0, q);
  let query = q < 0 ? '' : target.slice(q + 1);
  // The regular expression only when the path holds a piece of what it looks for.
  if (
    path.charCodeAt(0) !== 47 /* / */ ||
    path.charCodeAt(1) === 47 /* //host/...: a scheme-relative target */ ||
    ((path.includes('/.') || path.includes('%') || path.includes('\\') || path.includes('#')) && NEEDS_URL_PARSER.test(path))
  ) {
    let url: URL;
    try {
      url = new URL(target, 'http://x');
    } catch {
      return undefined;
    }
    path = url.pathname;
    query = url.search.slice(1);
  }
  const hash = query.indexOf('#');
  return { path, query: hash < 0 ? query : query.slice(0, hash) };
}
