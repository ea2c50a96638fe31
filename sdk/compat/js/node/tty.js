// `tty`: no terminal (stdout is the protocol's, stderr the host's log).
export const isatty = () => false;
export class WriteStream {}
export class ReadStream {}
export default { isatty, WriteStream, ReadStream };
