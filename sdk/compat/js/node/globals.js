// The globals Node gives every module, injected by the bundler where a module names them.
import processShim from './process.js';
import { Buffer } from 'buffer';

export const process = processShim;
export { Buffer };
export const global = globalThis;
export const setImmediate = (callback, ...args) => setTimeout(callback, 0, ...args);
export const clearImmediate = (handle) => clearTimeout(handle);
