// What this server says it is: Keel's own version string, and the Zulip API feature level it speaks.
export const ZULIP_VERSION = 'keel-0.1';
export const ZULIP_FEATURE_LEVEL = 372;
