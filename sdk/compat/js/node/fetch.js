// `node-fetch`, `undici`, `cross-fetch`: the runtime's own fetch, over wasi:http (and so through
// the host's allow-list, its address rules and its credentials).
const fetchShim = (...args) => globalThis.fetch(...args);
export default fetchShim;
export const fetch = fetchShim;
export const Headers = globalThis.Headers;
export const Request = globalThis.Request;
export const Response = globalThis.Response;
export const FormData = globalThis.FormData;
export class FetchError extends Error {}
export class AbortError extends Error {}
export const isRedirect = (code) => [301, 302, 303, 307, 308].includes(code);
