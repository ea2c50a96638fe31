// `url`: the WHATWG URL the runtime has, and Node's file-URL helpers.
const URLClass = globalThis.URL;
const URLSearchParamsClass = globalThis.URLSearchParams;

export function fileURLToPath(url) {
  const parsed = typeof url === 'string' ? new URLClass(url) : url;
  if (parsed.protocol !== 'file:') throw new TypeError('The URL must be of scheme file');
  return decodeURIComponent(parsed.pathname);
}

export function pathToFileURL(path) {
  return new URLClass(`file://${encodeURI(path.startsWith('/') ? path : `/${path}`)}`);
}

export function parse(text) {
  const url = new URLClass(text);
  return {
    protocol: url.protocol, host: url.host, hostname: url.hostname, port: url.port, pathname: url.pathname,
    search: url.search, query: url.search.slice(1), hash: url.hash, href: url.href,
    path: url.pathname + url.search, auth: url.username ? `${url.username}:${url.password}` : null,
  };
}

export function format(value) {
  return value instanceof URLClass ? value.href : new URLClass(value.href ?? String(value)).href;
}

export function resolve(from, to) {
  return new URLClass(to, new URLClass(from, 'resolve://')).href.replace(/^resolve:\/\//, '');
}

export { URLClass as URL, URLSearchParamsClass as URLSearchParams };
export default { URL: URLClass, URLSearchParams: URLSearchParamsClass, fileURLToPath, pathToFileURL, parse, format, resolve };
