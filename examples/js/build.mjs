// Builds app.js into a WebAssembly component for mcpbox: node build.mjs [OUT.wasm]
//
// Uses componentize-js's API (its `jco componentize` front end had a path bug). The `http` and
// `fetch-event` features are left out: they make the component import wasi:http, which mcpbox
// links only for plugins the operator granted network access; add them back (and ask for the
// grant) only if the plugin calls fetch().
import { componentize } from '@bytecodealliance/componentize-js';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const out = process.argv[2] ?? 'plugin.wasm';

// An app that exports `metadata` too (`_meta`, icons, apps, instructions, skills) is built
// against the world that has it.
const source = await readFile(here('./app.js'), 'utf8');
const describes = /export\s+const\s*\{[^}]*\bmetadata\b[^}]*\}/.test(source);
const { component } = await componentize({
  sourcePath: here('./app.js'),
  witPath: here('./wit'),
  worldName: describes ? 'described-plugin' : 'plugin',
  disableFeatures: ['http', 'fetch-event'],
});
await writeFile(out, component);
console.log(`built ${out} (${(component.length / 1e6).toFixed(1)} MB)`);
