// Who may read Keel's files: the data dir is the owner's alone (0700), and the files holding data
// or keys (the SQLite database with its -wal and -shm files, the secret key file) 0600. Keel makes
// them so; a file or directory that already existed keeps its mode, and start-up warns when it is wider.
import fs from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** One line for each path that exists and grants anything to group or others: the path, its mode and the fix. */
export function tooOpen(paths: { path: string; dir?: boolean }[]): string[] {
  const lines: string[] = [];
  for (const p of paths) {
    let mode: number;
    try {
      mode = fs.statSync(p.path).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) === 0) continue;
    const want = (p.dir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE).toString(8);
    lines.push(`${p.path} has mode 0${mode.toString(8)}: other users of this machine may read it; run chmod ${want} ${p.path}`);
  }
  return lines;
}
