// `util`: the parts servers and their libraries use.
export const TextEncoder = globalThis.TextEncoder;
export const TextDecoder = globalThis.TextDecoder;

export function promisify(fn) {
  if (fn[promisify.custom]) return fn[promisify.custom];
  return (...args) => new Promise((resolve, reject) => {
    fn(...args, (error, value) => (error ? reject(error) : resolve(value)));
  });
}
promisify.custom = Symbol.for('nodejs.util.promisify.custom');

export function callbackify(fn) {
  return (...args) => {
    const callback = args.pop();
    fn(...args).then((value) => callback(null, value), (error) => callback(error));
  };
}

export function inherits(child, parent) {
  Object.setPrototypeOf(child.prototype, parent.prototype);
  Object.setPrototypeOf(child, parent);
}

export function inspect(value) {
  if (typeof value === 'string') return `'${value}'`;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
inspect.custom = Symbol.for('nodejs.util.inspect.custom');

export function format(first, ...args) {
  if (typeof first !== 'string') return [first, ...args].map((v) => (typeof v === 'string' ? v : inspect(v))).join(' ');
  let i = 0;
  const out = first.replace(/%[sdifjoO%]/g, (spec) => {
    if (spec === '%%') return '%';
    if (i >= args.length) return spec;
    const value = args[i++];
    if (spec === '%d' || spec === '%i') return String(parseInt(value, 10));
    if (spec === '%f') return String(parseFloat(value));
    if (spec === '%j' || spec === '%o' || spec === '%O') return inspect(value);
    return String(value);
  });
  return [out, ...args.slice(i).map((v) => (typeof v === 'string' ? v : inspect(v)))].join(' ');
}

export function deprecate(fn) {
  return fn;
}

export function isDeepStrictEqual(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export const types = {
  isPromise: (v) => v instanceof Promise,
  isDate: (v) => v instanceof Date,
  isRegExp: (v) => v instanceof RegExp,
  isUint8Array: (v) => v instanceof Uint8Array,
  isAnyArrayBuffer: (v) => v instanceof ArrayBuffer,
};

export function debuglog() {
  return () => {};
}

export default {
  TextEncoder, TextDecoder, promisify, callbackify, inherits, inspect, format, deprecate, isDeepStrictEqual, types,
  debuglog,
};
