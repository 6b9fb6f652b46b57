// Zulip's fenced blocks, which are not CommonMark's: a fence is a whole line of 3 or more ` or ~
// with an optional language and header, it closes only on the very same fence string, and inside
// a quote or spoiler block fences nest (so an inner block's fence does not close the outer one).
// Code lines lose their trailing whitespace; a block without lines shows nothing.
import type { StateBlock } from 'markdown-it';
import { CODE_LANGUAGE_NAMES } from './code-language-names.js';

type BlockState = StateBlock;

// Zulip's FENCE_RE: the fence, a language ("py", ".py", "{.py}") and a header (a spoiler's title).
const FENCE = /^(~{3,}|`{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+\-./#]+)[ ]*([^ ~`][^~`]*)?\}?)?$/;

export interface FenceInfo {
  fence: string;
  lang: string | undefined;
  header: string | undefined;
}

export function matchFence(line: string): FenceInfo | null {
  const m = FENCE.exec(line);
  return m ? { fence: m[1], lang: m[2]?.toLowerCase(), header: m[3] } : null;
}

/** Quote and spoiler blocks hold Markdown (nested fences included); every other block is verbatim. */
export function holdsMarkdown(lang: string | undefined): boolean {
  return lang === 'quote' || lang === 'quoted' || lang === 'spoiler';
}

/** The name Zulip records as data-code-language: Pygments' name for the language, else as typed. */
export function codeLanguageName(lang: string): string {
  return CODE_LANGUAGE_NAMES.get(lang) ?? lang;
}

function lineText(state: BlockState, line: number): string {
  return state.src.slice(state.bMarks[line] + state.tShift[line], state.eMarks[line]);
}

/** The line that closes the block opened at `open` (the end line when it is never closed). */
function closingLine(state: BlockState, open: number, end: number, info: FenceInfo): number {
  // The blocks open at each line: the innermost one's fence closes it.
  const stack = [info];
  for (let line = open + 1; line < end; line++) {
    // A line indented past the block's own indentation is content, never a fence.
    if (state.sCount[line] !== state.blkIndent) continue;
    const text = lineText(state, line).trimEnd();
    const innermost = stack[stack.length - 1];
    if (text === innermost.fence) {
      stack.pop();
      if (stack.length === 0) return line;
    } else if (holdsMarkdown(innermost.lang)) {
      const inner = matchFence(text);
      if (inner) stack.push(inner);
    }
  }
  return end;
}

/** The block rule (in place of markdown-it's fence); tokens are `fence` with the info in meta. */
export function zulipFence(state: BlockState, startLine: number, endLine: number, silent: boolean): boolean {
  if (state.sCount[startLine] !== state.blkIndent) return false;
  const info = matchFence(lineText(state, startLine));
  if (!info) return false;
  if (silent) return true;
  const close = closingLine(state, startLine, endLine, info);
  const lines: string[] = [];
  for (let line = startLine + 1; line < close; line++) {
    const raw = state.src.slice(state.bMarks[line] + Math.min(state.tShift[line], state.blkIndent), state.eMarks[line]);
    lines.push(holdsMarkdown(info.lang) ? raw : raw.trimEnd());
  }
  state.line = close < endLine ? close + 1 : close;
  if (lines.length === 0) return true;
  const token = state.push('fence', 'code', 0);
  token.info = info.lang ?? '';
  token.meta = { ...info };
  // Code loses its leading and trailing blank lines, as Zulip's highlighter takes it.
  const content = holdsMarkdown(info.lang) || info.lang === 'math' ? lines.join('\n') : lines.join('\n').replace(/^\n+|\n+$/g, '');
  token.content = `${content}\n`;
  token.markup = info.fence;
  token.map = [startLine, state.line];
  return true;
}
