// What a rendering knows and gathers: the names a message may refer to (loaded from the store before
// rendering, since markdown-it's rules are synchronous) and who it mentions.
import type { CompiledLinkifier, LinkifyBudget } from '../linkifiers.js';

export interface MentionUser {
  id: number;
  full_name: string;
  /** A deactivated user's mention renders silent, as Zulip's does (false only when known to be deactivated). */
  isActive?: boolean;
}
export interface MentionGroup {
  id: number;
  name: string;
  memberIds: number[];
}
export interface LinkChannel {
  id: number;
  name: string;
}

/** The names a message may refer to, looked up before rendering. */
export interface MarkdownContext {
  /** Active users by lowercased full name (several when names clash). */
  usersByName: Map<string, MentionUser[]>;
  usersById: Map<number, MentionUser>;
  /** User groups by name, with their members including subgroups'. */
  groups: Map<string, MentionGroup>;
  /** Channels by lowercased name. */
  channels: Map<string, LinkChannel>;
  /** The realm's linkifiers, in their processing order. */
  linkifiers?: CompiledLinkifier[];
  /** The realm's own URL (scheme and host, no trailing slash): links to it become relative, as Zulip makes them. */
  realmUrl?: string;
  /** The realm's active custom emoji the message names, by name: the image URL. */
  realmEmoji?: Map<string, string>;
  /** The sender's translate_emoticons setting: `:)` and friends become emoji. */
  translateEmoticons?: boolean;
}

export const EMPTY_CONTEXT: MarkdownContext = { usersByName: new Map(), usersById: new Map(), groups: new Map(), channels: new Map() };

// A type alias (not an interface) so it fits markdown-it's open Env record.
export type RenderEnv = {
  ctx: MarkdownContext;
  /** The linkifiers' time on this message (quote and spoiler blocks render separately, on the same budget). */
  linkifyBudget: LinkifyBudget;
  users: Set<number>;
  groups: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
  /** Inside a quote: mentions there are silent, as Zulip renders quoted mentions (a reply must not re-notify). */
  inQuote: number;
  /** How many quote or spoiler blocks deep the rendering is. */
  nesting: number;
  /** prepareLists' start numbers for the source being parsed (none for a quote or spoiler's content). */
  listStarts?: Map<number, number>;
};

export function envOf(state: { env: unknown }): RenderEnv {
  return state.env as RenderEnv;
}
