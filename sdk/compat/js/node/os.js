// `os`: a plain Linux machine with one CPU, no network interfaces, and a home directory that
// does not exist (a plugin's files live in its granted directories).
export const EOL = '\n';
export const platform = () => 'linux';
export const type = () => 'Linux';
export const arch = () => 'wasm32';
export const release = () => '0.0.0';
export const hostname = () => 'mcpbox';
export const homedir = () => '/home/mcpbox';
export const tmpdir = () => '/tmp';
export const userInfo = () => ({ username: 'mcpbox', uid: 1000, gid: 1000, shell: null, homedir: '/home/mcpbox' });
export const cpus = () => [{ model: 'wasm', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }];
export const availableParallelism = () => 1;
export const totalmem = () => 0;
export const freemem = () => 0;
export const uptime = () => 0;
export const loadavg = () => [0, 0, 0];
export const networkInterfaces = () => ({});
export const endianness = () => 'LE';
export const constants = { signals: {}, errno: {} };
export default {
  EOL, platform, type, arch, release, hostname, homedir, tmpdir, userInfo, cpus, availableParallelism, totalmem,
  freemem, uptime, loadavg, networkInterfaces, endianness, constants,
};
