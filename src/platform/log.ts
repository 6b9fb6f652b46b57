// Structured logging: one JSON object a line on stderr. Secrets are never passed in.
export type Level = 'error' | 'warn' | 'info' | 'debug';
const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: Level, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const at = (lv: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lv] > RANK[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lv, msg, ...fields }) + '\n');
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}
