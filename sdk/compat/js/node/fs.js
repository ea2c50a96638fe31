// `fs` and `fs/promises` over the directories granted to the call (WASI preopens): an absolute
// path under a granted directory's guest path reaches it, with the grant's rights; any other
// path fails as it would on a machine where it does not exist (ENOENT) or may not be written
// (EACCES). The synchronous, callback and promise forms share one implementation (WASI calls
// are synchronous for the guest).
import { getDirectories } from 'wasi:filesystem/preopens@0.2.10';
import { Buffer } from 'buffer';
import { normalize, resolve as resolvePath } from 'path';
import EMBEDDED from 'mcpbox-embedded';

// The package's own files (docs, data) embedded by the build under /app, read-only.
function embeddedFile(absolute) {
  const data = EMBEDDED[absolute];
  return data === undefined ? undefined : Buffer.from(data, 'base64');
}
function embeddedChildren(absolute) {
  const prefix = absolute.endsWith('/') ? absolute : `${absolute}/`;
  const names = new Map();
  for (const path of Object.keys(EMBEDDED)) {
    if (!path.startsWith(prefix)) continue;
    const [name, ...rest] = path.slice(prefix.length).split('/');
    names.set(name, rest.length ? 'directory' : 'regular-file');
  }
  return names.size ? names : undefined;
}
function embeddedStat(absolute) {
  const file = embeddedFile(absolute);
  if (file) return { type: 'regular-file', size: BigInt(file.length), linkCount: 1n };
  if (embeddedChildren(absolute)) return { type: 'directory', size: 0n, linkCount: 1n };
  return undefined;
}

const CODES = {
  'no-entry': ['ENOENT', 'no such file or directory'],
  exist: ['EEXIST', 'file already exists'],
  'not-directory': ['ENOTDIR', 'not a directory'],
  'is-directory': ['EISDIR', 'illegal operation on a directory'],
  'not-empty': ['ENOTEMPTY', 'directory not empty'],
  access: ['EACCES', 'permission denied'],
  'not-permitted': ['EPERM', 'operation not permitted'],
  'read-only': ['EROFS', 'read-only file system'],
  'insufficient-space': ['ENOSPC', 'no space left on device'],
  quota: ['EDQUOT', 'disk quota exceeded'],
  invalid: ['EINVAL', 'invalid argument'],
  loop: ['ELOOP', 'too many symbolic links'],
  'name-too-long': ['ENAMETOOLONG', 'name too long'],
  'bad-descriptor': ['EBADF', 'bad file descriptor'],
};

function nodeError(cause, syscall, path) {
  const kind = cause?.payload ?? (typeof cause === 'string' ? cause : undefined);
  const [code, text] = CODES[kind] ?? ['EIO', `i/o error (${kind ?? cause?.message ?? cause})`];
  const error = new Error(`${code}: ${text}, ${syscall} '${path}'`);
  return Object.assign(error, { code, errno: -1, syscall, path });
}

let preopens;
function roots() {
  preopens ??= getDirectories().map(([descriptor, guestPath]) => ({ descriptor, guestPath: normalize(guestPath) }))
    .sort((a, b) => b.guestPath.length - a.guestPath.length);
  return preopens;
}

function pathOf(path) {
  if (path instanceof URL) return decodeURIComponent(path.pathname);
  if (typeof path !== 'string') path = String(path);
  return resolvePath('/', path);
}

/** The granted directory holding `path`, and the path relative to it. */
function locate(path, syscall) {
  const absolute = pathOf(path);
  for (const root of roots()) {
    const base = root.guestPath === '/' ? '/' : `${root.guestPath}/`;
    if (absolute === root.guestPath) return { root, rel: '.', absolute };
    if (absolute.startsWith(base)) return { root, rel: absolute.slice(base.length), absolute };
  }
  throw nodeError('no-entry', syscall, absolute);
}

function wasi(syscall, path, operation) {
  try {
    return operation();
  } catch (cause) {
    if (cause?.code && cause.syscall) throw cause;
    throw nodeError(cause, syscall, pathOf(path));
  }
}

const FOLLOW = { symlinkFollow: true };

function open(path, syscall, { create = false, truncate = false, exclusive = false, write = false, directory = false } = {}) {
  const { root, rel } = locate(path, syscall);
  return wasi(syscall, path, () => root.descriptor.openAt(FOLLOW, rel, { create, truncate, exclusive, directory },
    write ? { read: true, write: true } : { read: true }));
}

function readAll(descriptor) {
  const chunks = [];
  let offset = 0n;
  for (;;) {
    const [chunk, end] = descriptor.read(1n << 20n, offset);
    if (chunk.length) chunks.push(chunk);
    offset += BigInt(chunk.length);
    if (end || chunk.length === 0) break;
  }
  return Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.length)));
}

function encodingOf(options) {
  return typeof options === 'string' ? options : options?.encoding;
}

function toBytes(data, options) {
  if (typeof data === 'string') return Buffer.from(data, encodingOf(options) ?? 'utf8');
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(String(data));
}

function writeAt(descriptor, bytes, offset, syscall, path) {
  let written = 0;
  while (written < bytes.length) {
    const n = wasi(syscall, path, () => descriptor.write(bytes.subarray(written), offset + BigInt(written)));
    written += Number(n);
  }
}

export function readFileSync(path, options) {
  const file = embeddedFile(pathOf(path));
  if (file) return encodingOf(options) ? file.toString(encodingOf(options)) : file;
  const descriptor = open(path, 'open');
  const data = wasi('read', path, () => readAll(descriptor));
  const encoding = encodingOf(options);
  return encoding ? data.toString(encoding) : data;
}

export function writeFileSync(path, data, options) {
  const flag = typeof options === 'object' ? options?.flag : undefined;
  const append = flag === 'a' || flag === 'a+';
  const descriptor = open(path, 'open', { create: true, truncate: !append, exclusive: flag === 'wx', write: true });
  const offset = append ? wasi('fstat', path, () => descriptor.stat().size) : 0n;
  writeAt(descriptor, toBytes(data, options), offset, 'write', path);
}

export function appendFileSync(path, data, options) {
  writeFileSync(path, data, { ...(typeof options === 'object' ? options : { encoding: options }), flag: 'a' });
}

class Stats {
  constructor(stat) {
    this.type = stat.type;
    this.size = Number(stat.size);
    this.nlink = Number(stat.linkCount);
    const ms = (t) => (t ? Number(t.seconds) * 1000 + Math.floor(t.nanoseconds / 1e6) : 0);
    this.mtimeMs = ms(stat.dataModificationTimestamp);
    this.atimeMs = ms(stat.dataAccessTimestamp);
    this.ctimeMs = ms(stat.statusChangeTimestamp);
    this.birthtimeMs = this.ctimeMs;
    this.mtime = new Date(this.mtimeMs);
    this.atime = new Date(this.atimeMs);
    this.ctime = new Date(this.ctimeMs);
    this.birthtime = new Date(this.birthtimeMs);
    this.mode = (this.type === 'directory' ? 0o040000 : 0o100000) | 0o644;
    this.uid = 1000;
    this.gid = 1000;
  }
  isFile() { return this.type === 'regular-file'; }
  isDirectory() { return this.type === 'directory'; }
  isSymbolicLink() { return this.type === 'symbolic-link'; }
  isFIFO() { return false; }
  isSocket() { return false; }
  isBlockDevice() { return false; }
  isCharacterDevice() { return false; }
}

function statWith(path, syscall, follow) {
  const fromBuild = embeddedStat(pathOf(path));
  if (fromBuild) return new Stats(fromBuild);
  const { root, rel } = locate(path, syscall);
  return new Stats(wasi(syscall, path, () => root.descriptor.statAt({ symlinkFollow: follow }, rel)));
}

export function statSync(path, options) {
  try {
    return statWith(path, 'stat', true);
  } catch (error) {
    if (options?.throwIfNoEntry === false && error.code === 'ENOENT') return undefined;
    throw error;
  }
}

export function lstatSync(path) {
  return statWith(path, 'lstat', false);
}

export function existsSync(path) {
  try {
    statWith(path, 'stat', true);
    return true;
  } catch {
    return false;
  }
}

export function accessSync(path, mode = 0) {
  statWith(path, 'access', true);
  if (mode & 2) {
    const { root } = locate(path, 'access');
    const flags = wasi('access', path, () => root.descriptor.getFlags());
    if (!flags.mutateDirectory && !flags.write) throw nodeError('access', 'access', pathOf(path));
  }
}

class Dirent {
  constructor(entry, parentPath) {
    this.name = entry.name;
    this.type = entry.type;
    this.parentPath = parentPath;
    this.path = parentPath;
  }
  isFile() { return this.type === 'regular-file'; }
  isDirectory() { return this.type === 'directory'; }
  isSymbolicLink() { return this.type === 'symbolic-link'; }
}

export function readdirSync(path, options) {
  const fromBuild = embeddedChildren(pathOf(path));
  if (fromBuild) {
    const entries = [...fromBuild].map(([name, type]) => ({ name, type })).sort((a, b) => (a.name < b.name ? -1 : 1));
    return options?.withFileTypes ? entries.map((e) => new Dirent(e, pathOf(path))) : entries.map((e) => e.name);
  }
  const directory = open(path, 'scandir', { directory: true });
  const stream = wasi('scandir', path, () => directory.readDirectory());
  const entries = [];
  for (;;) {
    const entry = wasi('scandir', path, () => stream.readDirectoryEntry());
    if (!entry) break;
    entries.push(entry);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (options?.withFileTypes) return entries.map((e) => new Dirent(e, pathOf(path)));
  return entries.map((e) => e.name);
}

export function mkdirSync(path, options) {
  const recursive = typeof options === 'object' && options?.recursive;
  const absolute = pathOf(path);
  if (recursive) {
    const parts = absolute.split('/').filter(Boolean);
    let current = '';
    let first;
    for (const part of parts) {
      current += `/${part}`;
      if (existsSync(current)) continue;
      const { root, rel } = locate(current, 'mkdir');
      wasi('mkdir', current, () => root.descriptor.createDirectoryAt(rel));
      first ??= current;
    }
    return first;
  }
  const { root, rel } = locate(absolute, 'mkdir');
  wasi('mkdir', absolute, () => root.descriptor.createDirectoryAt(rel));
  return undefined;
}

export function rmdirSync(path) {
  const { root, rel } = locate(path, 'rmdir');
  wasi('rmdir', path, () => root.descriptor.removeDirectoryAt(rel));
}

export function unlinkSync(path) {
  const { root, rel } = locate(path, 'unlink');
  wasi('unlink', path, () => root.descriptor.unlinkFileAt(rel));
}

export function rmSync(path, options) {
  let stat;
  try {
    stat = lstatSync(path);
  } catch (error) {
    if (options?.force && error.code === 'ENOENT') return;
    throw error;
  }
  if (stat.isDirectory()) {
    if (options?.recursive) {
      for (const name of readdirSync(path)) rmSync(`${pathOf(path)}/${name}`, options);
    }
    rmdirSync(path);
  } else {
    unlinkSync(path);
  }
}

export function renameSync(from, to) {
  const source = locate(from, 'rename');
  const target = locate(to, 'rename');
  wasi('rename', from, () => source.root.descriptor.renameAt(source.rel, target.root.descriptor, target.rel));
}

export function copyFileSync(from, to) {
  writeFileSync(to, readFileSync(from));
}

export function realpathSync(path) {
  statWith(path, 'realpath', true);
  return pathOf(path);
}
realpathSync.native = realpathSync;

// Streams and watchers need a process that outlives the call.
function unavailable(name) {
  return () => { throw new Error(`fs.${name} is not available in an mcpbox plugin (a call has no lasting process)`); };
}
export const watch = unavailable('watch');
export const watchFile = unavailable('watchFile');

export function createReadStream(path, options) {
  throw new Error(`fs.createReadStream is not available in an mcpbox plugin (${pathOf(path)}); use readFile`);
}
export function createWriteStream(path) {
  throw new Error(`fs.createWriteStream is not available in an mcpbox plugin (${pathOf(path)}); use writeFile`);
}

export const constants = { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1, COPYFILE_EXCL: 1 };

const SYNC = {
  readFile: readFileSync, writeFile: writeFileSync, appendFile: appendFileSync, stat: statSync, lstat: lstatSync,
  access: accessSync, readdir: readdirSync, mkdir: mkdirSync, rmdir: rmdirSync, unlink: unlinkSync, rm: rmSync,
  rename: renameSync, copyFile: copyFileSync, realpath: realpathSync,
};

/** `fs/promises`. */
export const promises = Object.fromEntries(Object.entries(SYNC).map(([name, sync]) => [name, async (...args) => sync(...args)]));
promises.constants = constants;

function callbackForm(sync) {
  return (...args) => {
    const callback = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
    let result;
    let failure = null;
    try {
      result = sync(...args);
    } catch (error) {
      failure = error;
    }
    if (callback) queueMicrotask(() => callback(failure, result));
  };
}

export const readFile = callbackForm(readFileSync);
export const writeFile = callbackForm(writeFileSync);
export const appendFile = callbackForm(appendFileSync);
export const stat = callbackForm(statSync);
export const lstat = callbackForm(lstatSync);
export const access = callbackForm(accessSync);
export const readdir = callbackForm(readdirSync);
export const mkdir = callbackForm(mkdirSync);
export const rmdir = callbackForm(rmdirSync);
export const unlink = callbackForm(unlinkSync);
export const rm = callbackForm(rmSync);
export const rename = callbackForm(renameSync);
export const copyFile = callbackForm(copyFileSync);
export const realpath = callbackForm(realpathSync);
export function exists(path, callback) {
  const result = existsSync(path);
  queueMicrotask(() => callback(result));
}

const fs = {
  readFileSync, writeFileSync, appendFileSync, statSync, lstatSync, existsSync, accessSync, readdirSync, mkdirSync,
  rmdirSync, unlinkSync, rmSync, renameSync, copyFileSync, realpathSync, watch, watchFile, createReadStream,
  createWriteStream, constants, promises, readFile, writeFile, appendFile, stat, lstat, access, readdir, mkdir, rmdir,
  unlink, rm, rename, copyFile, realpath, exists, Stats, Dirent,
};
export default fs;
