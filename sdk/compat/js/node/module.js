// `module`: `createRequire` for what a server reads next to its code with `require`: JSON
// files (its package.json, data) from the files the build embedded. Code is bundled at build
// time; requiring code by a computed path throws, naming it.
import { readFileSync } from './fs.js';
import { dirname, resolve } from 'path';
import { fileURLToPath } from './url.js';

export function createRequire(from) {
  const base = dirname(String(from).startsWith('file:') ? fileURLToPath(from) : String(from));
  return function require(request) {
    const path = resolve(base, request);
    if (path.endsWith('.json')) return JSON.parse(readFileSync(path, 'utf8'));
    throw new Error(`require(${JSON.stringify(request)}) at run time is not available in an mcpbox plugin (code is bundled at build time)`);
  };
}

export const builtinModules = [];
export default { createRequire, builtinModules };
