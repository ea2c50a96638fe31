// Dates as Node formats them by default (its ICU's `en-US`): the JavaScript engine here has no
// Intl data, and its `toLocale*String` would answer in another format than the server's author
// saw ("23:25:47" for "11:25:47 PM"). Other locales and options fall through to the engine.
const pad = (n) => String(n).padStart(2, '0');

function time(date) {
  const hours = date.getHours() % 12 || 12;
  return `${hours}:${pad(date.getMinutes())}:${pad(date.getSeconds())} ${date.getHours() < 12 ? 'AM' : 'PM'}`;
}

function day(date) {
  return `${date.getMonth() + 1}/${date.getDate()}/${date.getFullYear()}`;
}

const english = (locales, options) => (locales === undefined || locales === 'en-US') && options === undefined;

for (const [name, format] of [
  ['toLocaleTimeString', time],
  ['toLocaleDateString', day],
  ['toLocaleString', (date) => `${day(date)}, ${time(date)}`],
]) {
  const original = Date.prototype[name];
  Date.prototype[name] = function (locales, options) {
    return english(locales, options) && !Number.isNaN(this.getTime()) ? format(this) : original.call(this, locales, options);
  };
}
