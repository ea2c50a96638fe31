// `fs/promises`: the promise forms of fs.js.
import { promises } from './fs.js';

export const {
  readFile, writeFile, appendFile, stat, lstat, access, readdir, mkdir, rmdir, unlink, rm, rename, copyFile, realpath,
  constants,
} = promises;
export default promises;
