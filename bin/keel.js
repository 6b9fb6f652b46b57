#!/usr/bin/env node
// The `keel` command: runs the TypeScript sources through tsx, so a checkout needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
