// What a JavaScript project may bring into its component: its own files and what npm installs
// from the registry, nothing else of the build machine. Each refusal is a blocker of the report
// (`at`: the project's file and line, `what`, `why`), all of them found before anything is
// installed or bundled:
//
// - a link is followed only when it resolves inside the project (or a directory the user named
//   with --include); the staged copy holds its content, never a link;
// - a dependency is a registry version: `file:`, `link:` and path dependencies only inside the
//   project, no git dependency (git would fetch with this machine's keys, and npm runs a git
//   dependency's `prepare`), in package.json, its overrides and workspaces, and the lockfiles;
// - `.npmrc` may not name a registry, a git program, a shell or anything of this machine
//   (`${VAR}`): registry settings come from mcpbox build's command line only;
// - after the install, every link npm made resolves inside the build's own directory;
// - an import resolves inside the project, its installed dependencies or mcpbox's own layer
//   (checked as esbuild resolves it, build.mjs).
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const OUTSIDE = 'outside the project: mcpbox build takes only the project\'s own files and what it installs from the registry (name a directory with --include DIR to take it)';

const GIT = 'a git dependency: git would fetch it with this machine\'s keys, and npm runs its prepare script; use a version from the registry';

// Whether `path` (links resolved) is `root` or under it, for any of `roots` (resolved already).
export function inside(path, roots) {
  let real;
  try {
    real = realpathSync(path);
  } catch {
    real = resolve(path);
  }
  return roots.some((root) => real === root || real.startsWith(root + sep));
}

// `roots` resolved, for `inside`.
export function realRoots(paths) {
  return paths.filter((p) => p && existsSync(p)).map((p) => realpathSync(p));
}

// Copies the project `from` into `to` as files and directories only (node_modules and .git
// left out, as npm installs the one and the other is history): a link inside `allowed` is
// copied as what it points at, a link outside is a blocker, so is anything but a file or a
// directory. `at` names an entry relative to the project.
export function copyProject(from, to, allowed, blockers) {
  const seen = new Set();
  const walk = (source, target) => {
    const real = realpathSync(source);
    if (seen.has(real)) return;
    seen.add(real);
    mkdirSync(target, { recursive: true });
    for (const name of readdirSync(source)) {
      if (name === 'node_modules' || name === '.git') continue;
      const path = join(source, name);
      const at = relative(from, path).split(sep).join('/');
      let stat = lstatSync(path);
      if (stat.isSymbolicLink()) {
        let points;
        try {
          points = realpathSync(path);
        } catch {
          blockers.push({ at, what: 'a link to nothing', why: 'mcpbox build copies only files and directories' });
          continue;
        }
        if (!inside(points, allowed)) {
          blockers.push({ at, what: `a link to ${points}`, why: OUTSIDE });
          continue;
        }
        stat = lstatSync(points);
      }
      if (stat.isDirectory()) walk(path, join(target, name));
      else if (stat.isFile()) copyFileSync(path, join(target, name));
      else blockers.push({ at, what: 'neither a file nor a directory', why: 'mcpbox build copies only files and directories' });
    }
  };
  walk(from, to);
}

// The 1-based line of `file`'s text where `needle` first appears (1 if nowhere).
function lineOf(text, needle) {
  const at = text.indexOf(needle);
  return at < 0 ? 1 : text.slice(0, at).split('\n').length;
}

// Why a dependency spec of a manifest cannot be installed, or null: `dir` is the directory the
// spec is relative to.
function refusedSpec(spec, dir, allowed) {
  if (typeof spec !== 'string') return null;
  if (/^(git\+|git:|github:|gitlab:|bitbucket:|gist:)/.test(spec) || /^[\w.-]+\/[\w.-]+(#.*)?$/.test(spec)) {
    return GIT;
  }
  if (/^(https?:)/.test(spec)) return 'a tarball from a URL: use a version from the registry';
  const path = spec.startsWith('file:') ? spec.slice(5) : spec.startsWith('link:') ? spec.slice(5) : /^(\.|\/|~)/.test(spec) ? spec : null;
  if (path === null) return null;
  const target = path.startsWith('~') ? path : resolve(dir, path.replace(/^\/\/+/, '/'));
  if (path.startsWith('~') || !inside(target, allowed)) return OUTSIDE;
  return null;
}

// Checks the staged project's manifest, lockfiles and .npmrc (in `app`, a copy of the
// project: paths in them are taken relative to it, as npm would).
export function checkManifest(app, allowed, blockers) {
  const manifestPath = join(app, 'package.json');
  if (existsSync(manifestPath)) {
    const text = readFileSync(manifestPath, 'utf8');
    let manifest = {};
    try {
      manifest = JSON.parse(text);
    } catch (error) {
      blockers.push({ at: 'package.json', what: 'not JSON', why: String(error.message) });
    }
    const specs = [];
    for (const key of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
      for (const [name, spec] of Object.entries(manifest[key] ?? {})) specs.push([name, spec]);
    }
    const overrides = (object) => {
      for (const [name, value] of Object.entries(object ?? {})) {
        if (typeof value === 'string') specs.push([name, value]);
        else if (value && typeof value === 'object') overrides(value);
      }
    };
    overrides(manifest.overrides);
    for (const [name, spec] of specs) {
      const why = refusedSpec(spec, app, allowed);
      if (why) blockers.push({ at: `package.json:${lineOf(text, JSON.stringify(spec))}`, what: `the dependency ${name}: ${spec}`, why });
    }
    const workspaces = Array.isArray(manifest.workspaces) ? manifest.workspaces : manifest.workspaces?.packages ?? [];
    for (const pattern of workspaces) {
      if (typeof pattern === 'string' && !inside(resolve(app, pattern.replace(/\*.*$/, '')), allowed)) {
        blockers.push({ at: `package.json:${lineOf(text, JSON.stringify(pattern))}`, what: `the workspace ${pattern}`, why: OUTSIDE });
      }
    }
  }
  for (const lockfile of ['package-lock.json', 'npm-shrinkwrap.json']) {
    const path = join(app, lockfile);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    let lock = {};
    try {
      lock = JSON.parse(text);
    } catch {
      blockers.push({ at: lockfile, what: 'not JSON', why: 'npm could not read it either' });
      continue;
    }
    for (const [key, entry] of Object.entries(lock.packages ?? {})) {
      const spec = entry?.resolved ?? (entry?.link ? `file:${key}` : null);
      const why = spec && !/^https?:\/\//.test(spec) ? refusedSpec(spec.startsWith('file:') || spec.startsWith('git') ? spec : `file:${spec}`, app, allowed) : null;
      if (why) blockers.push({ at: `${lockfile}:${lineOf(text, JSON.stringify(key))}`, what: `${key} resolved to ${spec}`, why });
    }
  }
  const npmrc = join(app, '.npmrc');
  if (existsSync(npmrc)) {
    const harmless = new Set(['save-exact', 'save-prefix', 'engine-strict', 'fund', 'audit', 'package-lock', 'legacy-peer-deps', 'strict-peer-deps', 'auto-install-peers', 'loglevel', 'progress']);
    readFileSync(npmrc, 'utf8').split('\n').forEach((line, i) => {
      const setting = line.trim();
      if (!setting || setting.startsWith('#') || setting.startsWith(';')) return;
      const key = setting.split('=')[0].trim();
      if (!harmless.has(key) || setting.includes('${')) {
        blockers.push({ at: `.npmrc:${i + 1}`, what: setting.length > 120 ? `${setting.slice(0, 120)}...` : setting, why: 'a project\'s .npmrc may not choose the registry, a program to run or anything of this machine: mcpbox build takes registry settings from its own command line' });
      }
    });
  }
}

// After the install: every link npm made under node_modules resolves inside `allowed` (the
// build's own directory, with the project's copy), and no package came from git or a path
// outside (`node_modules/.package-lock.json`, npm's record of what it installed).
export function checkInstalled(app, allowed, blockers) {
  const modules = join(app, 'node_modules');
  if (!existsSync(modules)) return;
  const walk = (dir, depth) => {
    if (depth > 64) return;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) {
        if (!inside(path, allowed)) {
          let points = '';
          try {
            points = realpathSync(path);
          } catch {
            points = 'nothing';
          }
          blockers.push({ at: relative(app, path).split(sep).join('/'), what: `installed as a link to ${points}`, why: OUTSIDE });
        }
      } else if (stat.isDirectory()) {
        walk(path, depth + 1);
      }
    }
  };
  walk(modules, 0);
  const record = join(modules, '.package-lock.json');
  if (!existsSync(record)) return;
  const text = readFileSync(record, 'utf8');
  for (const [key, entry] of Object.entries(JSON.parse(text).packages ?? {})) {
    const spec = entry?.resolved;
    if (typeof spec === 'string' && /^git/.test(spec)) {
      blockers.push({ at: key, what: `installed from ${spec}`, why: GIT });
    }
  }
}

// The directory of the project a lone file belongs to: the nearest directory above it with a
// package.json, but not past a repository's root (.git) or into the home directory or `/`
// (a stray package.json there would make the whole home the project).
export function projectOf(file, home) {
  let dir = dirname(file);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir === home || dirname(dir) === dir ? null : dir;
    if (existsSync(join(dir, '.git')) || dirname(dir) === dir || dirname(dir) === home) return null;
    dir = dirname(dir);
  }
}
