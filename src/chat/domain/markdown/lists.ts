// Zulip's lists on markdown-it: a list may hang off a paragraph without a blank line (Zulip inserts
// one, as its hanging-lists preprocessor does), items nest by 2 spaces of indentation whatever the
// marker's width, and *, - and + bullets make one list. The first two are line rewrites of the
// source before parsing (outside code fences); the last merges adjacent lists after it.
import type { StateCore } from 'markdown-it';
import { holdsMarkdown, matchFence } from './fences.js';

type CoreState = StateCore;

const LIST_ITEM = /^( *)([*+-]|\d+[.)])( +)(.*)$/;
// Zulip's own test for "a list item follows": a bullet or a number with a dot.
const ZULIP_LIST_ITEM = /^[ ]*([*+-]|\d\.)[ ]+/;

interface OpenItem {
  /** Indentation as typed. */
  typed: number;
  /** Where markdown-it needs the item's content to start for it to hold what Zulip puts in it. */
  content: number;
}

export interface PreparedLists {
  source: string;
  /**
   * The numbers nested ordered lists start from, by line of the prepared source: their first item
   * is written as 1 there, since CommonMark lets only a list starting at 1 follow text directly.
   */
  starts: Map<number, number>;
}

/** Rewrites the source's lines as described above; code fence contents are left as they are. */
export function prepareLists(src: string): PreparedLists {
  const starts = new Map<number, number>();
  if (!/^[ ]*([*+-]|\d+[.)])[ ]/m.test(src)) return { source: src, starts };
  const lines = src.split('\n');
  const out: string[] = [];
  const fences: { fence: string; code: boolean }[] = [];
  let open: OpenItem[] = [];
  let previousBlank = true;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    const fence = matchFence(line.trimEnd());
    if (fence) {
      // As Zulip's preprocessor tracks them: a bare fence equal to the innermost one closes it.
      if (!fence.lang && fences.at(-1)?.fence === fence.fence) fences.pop();
      else fences.push({ fence: fence.fence, code: !holdsMarkdown(fence.lang) });
    }
    if (fence || fences.some((f) => f.code)) {
      out.push(line);
      open = [];
      previousBlank = false;
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (line.trim() === '') {
      previousBlank = true;
      out.push(line);
      continue;
    }
    const indent = line.length - line.trimStart().length;
    if (item && (open.length > 0 || indent < 4)) {
      // A nested item is indented 2 or more past its parent; it goes where the parent's content starts.
      while (open.length && open.at(-1)!.typed + 2 > indent) open.pop();
      const at = open.length ? open.at(-1)!.content : 0;
      const spaces = item[3].length > 4 ? 1 : item[3].length;
      let marker = item[2];
      const number = /^(\d+)([.)])$/.exec(marker);
      if (number && open.length && Number(number[1]) !== 1) {
        marker = `1${number[2]}`.padEnd(marker.length, ' ');
        starts.set(out.length, Number(number[1]));
      }
      line = `${' '.repeat(at)}${marker}${' '.repeat(spaces)}${item[4]}`;
      open.push({ typed: indent, content: at + item[2].length + spaces });
    } else if (open.length && indent >= 2) {
      // Content inside an item, 2 past the item's own indentation as Zulip counts it.
      let owner = open.length - 1;
      while (owner > 0 && open[owner].typed + 2 > indent) owner--;
      const shift = open[owner].content - (open[owner].typed + 2);
      line = shift >= 0 ? ' '.repeat(shift) + line : line.slice(Math.min(-shift, indent));
    } else if (previousBlank) {
      open = [];
    }
    // Zulip's hanging lists: a blank line before an item that follows text or an item of the other kind.
    const prev = out.at(-1);
    if (prev !== undefined && prev !== '' && ZULIP_LIST_ITEM.test(line)) {
      const a = ZULIP_LIST_ITEM.exec(prev);
      const b = ZULIP_LIST_ITEM.exec(line)!;
      if (!a || (a[1].length === 1) !== (b[1].length === 1)) out.push('');
    }
    out.push(line);
    previousBlank = false;
  }
  return { source: out.join('\n'), starts };
}

/** Gives nested ordered lists the start numbers prepareLists took from them. */
export function restoreListStarts(state: CoreState, starts: Map<number, number> | undefined): void {
  if (!starts?.size) return;
  for (const token of state.tokens) {
    const start = token.type === 'ordered_list_open' && token.map ? starts.get(token.map[0]) : undefined;
    if (start !== undefined) token.attrSet('start', String(start));
  }
}

/**
 * Joins bullet lists that follow one another with nothing between (CommonMark starts a new list
 * when the bullet changes); a blank line between them makes the joined list loose.
 */
export function mergeBulletLists(state: CoreState): void {
  const tokens = state.tokens;
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i].type !== 'bullet_list_open' || tokens[i - 1].type !== 'bullet_list_close') continue;
    // Find the list the closing token belongs to, to learn where it ended.
    let depth = 0;
    let first = i - 1;
    for (; first >= 0; first--) {
      if (tokens[first].type === 'bullet_list_close') depth++;
      else if (tokens[first].type === 'bullet_list_open' && --depth === 0) break;
    }
    const gap = (tokens[first].map?.[1] ?? 0) < (tokens[i].map?.[0] ?? 0);
    const closeAt = i - 1;
    if (tokens[first].map && tokens[i].map) tokens[first].map = [tokens[first].map![0], tokens[i].map![1]];
    tokens.splice(closeAt, 2);
    if (gap) {
      // Loose: every paragraph directly in this list's items shows.
      let level = 0;
      for (let j = first + 1; j < tokens.length; j++) {
        const t = tokens[j];
        if (t.type === 'bullet_list_open' || t.type === 'ordered_list_open') level++;
        if (t.type === 'bullet_list_close' || t.type === 'ordered_list_close') {
          if (level === 0) break;
          level--;
        }
        if (level === 0 && (t.type === 'paragraph_open' || t.type === 'paragraph_close')) t.hidden = false;
      }
    }
    i = first;
  }
}
