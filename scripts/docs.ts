// Writes the generated API reference, docs/chat-api.md, from the Chat endpoint definitions
// (`npm run docs`); with --check it only says whether the committed file is current (exit 1 if not).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../src/chat/endpoints/index.js';
import { chatApiMarkdown } from '../src/chat/openapi.js';

const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/chat-api.md');
const text = chatApiMarkdown(openApiDocument());
let current = '';
try {
  current = readFileSync(file, 'utf8');
} catch {
  // No file yet: it is written below, or --check reports it.
}
if (process.argv.includes('--check')) {
  if (current !== text) {
    console.error(`${path.relative(process.cwd(), file)} is not what the definitions produce: run npm run docs`);
    process.exit(1);
  }
} else if (current !== text) {
  writeFileSync(file, text);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
