// `zlib`: the synchronous and callback forms of gzip, deflate and raw deflate, by pako (the
// pure-JavaScript port of zlib). Streams need a process that outlives the call.
import pako from 'pako';
import { Buffer } from 'buffer';

const wrap = (fn) => (data, options) => Buffer.from(fn(typeof data === 'string' ? Buffer.from(data) : data, options));
export const gzipSync = wrap(pako.gzip);
export const gunzipSync = wrap(pako.ungzip);
export const deflateSync = wrap(pako.deflate);
export const inflateSync = wrap(pako.inflate);
export const deflateRawSync = wrap(pako.deflateRaw);
export const inflateRawSync = wrap(pako.inflateRaw);
export const unzipSync = wrap(pako.inflate);

const callbackForm = (sync) => (data, options, callback) => {
  if (typeof options === 'function') [options, callback] = [undefined, options];
  let result;
  let failure = null;
  try {
    result = sync(data, options);
  } catch (error) {
    failure = error;
  }
  queueMicrotask(() => callback(failure, result));
};
export const gzip = callbackForm(gzipSync);
export const gunzip = callbackForm(gunzipSync);
export const deflate = callbackForm(deflateSync);
export const inflate = callbackForm(inflateSync);
export const deflateRaw = callbackForm(deflateRawSync);
export const inflateRaw = callbackForm(inflateRawSync);
export const constants = { Z_NO_FLUSH: 0, Z_FINISH: 4, Z_BEST_COMPRESSION: 9, Z_BEST_SPEED: 1, Z_DEFAULT_COMPRESSION: -1 };

function streamsUnavailable(name) {
  return () => { throw new Error(`zlib.${name} is not available in an mcpbox plugin; use the Sync form`); };
}
export const createGzip = streamsUnavailable('createGzip');
export const createGunzip = streamsUnavailable('createGunzip');

export default {
  gzipSync, gunzipSync, deflateSync, inflateSync, deflateRawSync, inflateRawSync, unzipSync, gzip, gunzip, deflate,
  inflate, deflateRaw, inflateRaw, constants, createGzip, createGunzip,
};
