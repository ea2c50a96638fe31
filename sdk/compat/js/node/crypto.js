// `crypto`: random bytes and UUIDs from WASI's random source (the runtime's Web Crypto), and
// SHA-256/SHA-1 hashes and HMACs computed here (Node's `createHash` is synchronous; Web Crypto
// digests are not). Other algorithms, ciphers and keys throw, naming themselves.
import { Buffer } from 'buffer';
import { sha256, sha1 } from './hashes.js';

const webcrypto = globalThis.crypto;

export function randomBytes(size, callback) {
  const bytes = Buffer.alloc(size);
  for (let offset = 0; offset < size; offset += 65536) {
    webcrypto.getRandomValues(bytes.subarray(offset, Math.min(size, offset + 65536)));
  }
  if (callback) {
    queueMicrotask(() => callback(null, bytes));
    return undefined;
  }
  return bytes;
}

export function randomUUID() {
  return webcrypto.randomUUID();
}

export function randomInt(min, max) {
  if (max === undefined) [min, max] = [0, min];
  const range = max - min;
  const [value] = webcrypto.getRandomValues(new Uint32Array(1));
  return min + (value % range);
}

export function getRandomValues(array) {
  return webcrypto.getRandomValues(array);
}

const ALGORITHMS = { sha256: [sha256, 64], 'sha-256': [sha256, 64], sha1: [sha1, 64], 'sha-1': [sha1, 64] };

function algorithm(name) {
  const found = ALGORITHMS[String(name).toLowerCase()];
  if (!found) throw new Error(`crypto: the hash ${name} is not available in an mcpbox plugin (sha256 and sha1 are)`);
  return found;
}

function bytesOf(data, encoding) {
  return typeof data === 'string' ? Buffer.from(data, encoding ?? 'utf8') : Buffer.from(data);
}

function finish(digest, encoding) {
  const out = Buffer.from(digest);
  return encoding ? out.toString(encoding) : out;
}

export function createHash(name) {
  const [hash] = algorithm(name);
  const parts = [];
  return {
    update(data, encoding) { parts.push(bytesOf(data, encoding)); return this; },
    digest(encoding) { return finish(hash(Buffer.concat(parts)), encoding); },
  };
}

export function createHmac(name, key) {
  const [hash, block] = algorithm(name);
  let secret = bytesOf(key);
  if (secret.length > block) secret = Buffer.from(hash(secret));
  const padded = Buffer.concat([secret, Buffer.alloc(block - secret.length)]);
  const inner = padded.map((b) => b ^ 0x36);
  const outer = padded.map((b) => b ^ 0x5c);
  const parts = [];
  return {
    update(data, encoding) { parts.push(bytesOf(data, encoding)); return this; },
    digest(encoding) {
      const innerHash = hash(Buffer.concat([inner, ...parts]));
      return finish(hash(Buffer.concat([outer, Buffer.from(innerHash)])), encoding);
    },
  };
}

export function timingSafeEqual(a, b) {
  if (a.length !== b.length) throw new RangeError('Input buffers must have the same byte length');
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

function unavailable(name) {
  return () => { throw new Error(`crypto.${name} is not available in an mcpbox plugin`); };
}
export const createCipheriv = unavailable('createCipheriv');
export const createDecipheriv = unavailable('createDecipheriv');
export const createSign = unavailable('createSign');
export const createVerify = unavailable('createVerify');
export const generateKeyPairSync = unavailable('generateKeyPairSync');
export const subtle = webcrypto.subtle;
export { webcrypto };

export default {
  randomBytes, randomUUID, randomInt, getRandomValues, createHash, createHmac, timingSafeEqual, createCipheriv,
  createDecipheriv, createSign, createVerify, generateKeyPairSync, subtle, webcrypto,
};
