#!/usr/bin/env node
// Entry point: runs the TypeScript CLI through tsx's loader so a checkout works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
