#!/usr/bin/env node
// Entry for `npx lookout …` and `npm start`: loads TypeScript through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
