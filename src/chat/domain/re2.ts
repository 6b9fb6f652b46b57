// User-supplied regular expressions run on RE2 (re2js, a pure-JavaScript port): matching takes time
// linear in the text whatever the pattern, where JavaScript's backtracking RegExp can take
// exponential time on patterns like (a+)+b. RE2 refuses what it cannot run in linear time
// (backreferences, lookaround); its refusals are reported in RE2's own words, as Zulip (which
// compiles linkifiers with the C++ RE2) reports them: "missing ): (foo", "invalid perl operator: (?=".
import { RE2JS } from 're2js';

/** A pattern RE2 refuses; the message is RE2's ("invalid escape sequence: \1"). */
export class Re2SyntaxError extends Error {}

// re2js words its errors as Go's regexp/syntax does; the C++ RE2 (Zulip's) says the same things
// in these words.
const CXX_TEXT: Record<string, string> = {
  'missing closing ]': 'missing ]',
  'missing closing )': 'missing )',
  'trailing backslash at end of expression': 'trailing \\',
  'missing argument to repetition operator': 'no argument for repetition operator',
  'invalid repeat count': 'invalid repetition size',
  'invalid nested repetition operator': 'bad repetition operator',
  'invalid or unsupported Perl syntax': 'invalid perl operator',
  'invalid named capture': 'invalid named capture group',
};

/**
 * Instructions a compiled user pattern may have. re2js finds matches with its NFA (or a bounded
 * backtracker), whose time is linear in the text times the instructions alive at once, so the
 * program is bounded too. Real linkifiers are far smaller (#(?P<id>[0-9]+): 7; org/repo#id: 16;
 * Zulip's own seven-group test pattern: 68; a 30-project alternation: 122); at 250, a 10,000-character
 * line built against one pattern takes about 80 ms at worst.
 */
export const MAX_PROGRAM_SIZE = 250;

function re2Message(err: unknown): string {
  const e = err as { error?: unknown; input?: unknown; message?: unknown };
  if (typeof e.error !== 'string') return String(e.message ?? err).replace(/^error parsing regexp: /, '');
  const code = e.error;
  const arg = typeof e.input === 'string' ? e.input : '';
  // re2js reads (?<= and (?<! as a bad group name; RE2 names them as the operators it lacks.
  if (code === 'invalid named capture' && /^\(\?<[=!]/.test(arg)) return `invalid perl operator: ${arg.slice(0, 4)}`;
  if (code === 'expression too large' || code === 'expression nests too deeply') return 'pattern too large - compile failed';
  const text = CXX_TEXT[code] ?? code;
  return arg ? `${text}: ${arg}` : text;
}

/** Compiles a pattern in RE2 syntax, or throws Re2SyntaxError in RE2's words. */
export function compileRe2(pattern: string): RE2JS {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw new Re2SyntaxError(re2Message(err));
  }
  if (re.programSize() > MAX_PROGRAM_SIZE) throw new Re2SyntaxError('pattern too large - compile failed');
  return re;
}

/**
 * The pattern as one atom to embed in a larger RE2 pattern: an unclosed \Q (RE2 quotes to the end
 * of the pattern) is closed, so the quoting stops where the embedded pattern does. `pattern` must
 * already compile on its own (a stray ")" would otherwise close the caller's group).
 */
export function embeddable(pattern: string): string {
  let quoted = false;
  for (let i = 0; i < pattern.length; i++) {
    if (quoted) {
      if (pattern.startsWith('\\E', i)) {
        quoted = false;
        i++;
      }
    } else if (pattern[i] === '\\') {
      if (pattern[i + 1] === 'Q') quoted = true;
      i++;
    }
  }
  return `(?:${pattern}${quoted ? '\\E' : ''})`;
}
