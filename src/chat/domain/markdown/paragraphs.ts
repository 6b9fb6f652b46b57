// Paragraphs keep their spaces as Zulip's do: only the first line's indentation goes, trailing
// spaces stay, and a newline (a <br>) keeps the spaces around it ("test  " is <p>test  </p>).
import type { StateBlock, StateInline } from 'markdown-it';

/** The paragraph block rule (in place of markdown-it's, which trims the text at both ends). */
export function paragraph(state: StateBlock, startLine: number, endLine: number): boolean {
  const terminators = state.md.block.ruler.getRules('paragraph');
  const parentType = state.parentType;
  state.parentType = 'paragraph';
  let next = startLine + 1;
  for (; next < endLine && !state.isEmpty(next); next++) {
    // Indented lines and lazy continuations never end a paragraph.
    if (state.sCount[next] - state.blkIndent > 3 || state.sCount[next] < 0) continue;
    if (terminators.some((rule) => rule(state, next, endLine, true))) break;
  }
  const content = state.getLines(startLine, next, state.blkIndent, false).trimStart();
  state.line = next;
  const open = state.push('paragraph_open', 'p', 1);
  open.map = [startLine, state.line];
  const inline = state.push('inline', '', 0);
  inline.content = content;
  inline.map = [startLine, state.line];
  inline.children = [];
  state.push('paragraph_close', 'p', -1);
  state.parentType = parentType;
  return true;
}

/** A newline is a line break; unlike markdown-it's rule, the spaces before and after it stay. */
export function newline(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x0a) return false;
  if (!silent) state.push('softbreak', 'br', 0);
  state.pos++;
  return true;
}
