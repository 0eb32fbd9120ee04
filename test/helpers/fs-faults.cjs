// The file-system fault injector: a preload (`node --require`, through
// NODE_OPTIONS) that makes the CLI's file-system calls on paths under one
// directory fail as a full, forbidden, read-only, failing or vanishing disk
// does, or get stuck. Configured by AERIAL_TEST_FS_FAULT (JSON, see
// fs-faults.ts, which makes it):
//   under  the directory whose paths (and files opened there) are struck
//   fault  an errno code (ENOSPC, EACCES, EROFS, EIO, ENOENT…) or "stuck"
//   kinds  which calls: open, create, read, write, sync, close, stat, mkdir,
//          rename, remove, readdir, utimes
//   after  how many matching calls succeed first (a fault part way)
//   log    a file each strike is appended to: "<kind> <syscall> <path>"
//   fifo   for "stuck": a FIFO nobody writes to; a stuck call opens it for
//          reading in Node's thread pool, where it waits for ever, as a call
//          to a hung network file system does (and process.exit() waits for it)
// The errors are Node's own shape: code, errno, syscall, path (and dest).
// fs/promises, the FileHandle methods, the callback API (which file streams
// use) and the synchronous API are all covered; a synchronous call is never
// made to stick (it would hold the main thread, not the thread pool).
'use strict';
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const { syncBuiltinESMExports } = require('node:module');
const { constants } = require('node:os');
const { resolve, sep } = require('node:path');

const spec = JSON.parse(process.env.AERIAL_TEST_FS_FAULT);
const under = resolve(spec.under);
const kinds = new Set(spec.kinds);
let passed = 0;

const original = {
  open: fsp.open,
  appendFileSync: fs.appendFileSync,
};

/** Files opened under `under`, by descriptor: calls on them are struck too. */
const opened = new Map();

function inside(path) {
  if (typeof path === 'number') return opened.has(path);
  if (path === undefined || path === null) return false;
  const text = Buffer.isBuffer(path) ? path.toString() : path instanceof URL ? path.pathname : String(path);
  const full = resolve(text);
  return full === under || full.startsWith(under + sep);
}

const DESCRIPTIONS = {
  ENOSPC: 'no space left on device',
  EACCES: 'permission denied',
  EROFS: 'read-only file system',
  EIO: 'i/o error',
  ENOENT: 'no such file or directory',
  EDQUOT: 'disk quota exceeded',
  EPERM: 'operation not permitted',
};

function errnoError(syscall, path, dest) {
  const code = spec.fault;
  const shown = typeof path === 'number' || path === undefined ? '' : ` '${String(path)}'`;
  const error = new Error(`${code}: ${DESCRIPTIONS[code] ?? code}, ${syscall}${shown}${dest === undefined ? '' : ` -> '${String(dest)}'`}`);
  Object.assign(error, { errno: -(constants.errno[code] ?? 0), code, syscall });
  if (typeof path !== 'number' && path !== undefined) error.path = String(path);
  if (dest !== undefined) error.dest = String(dest);
  return error;
}

/** Whether this call is struck: undefined (go on), 'stuck', or the error to fail with. */
function strike(kind, syscall, path, options = {}) {
  if (!kinds.has(kind) || !inside(path)) return undefined;
  if (spec.fault === 'stuck' && options.sync) return undefined;
  passed += 1;
  if (passed <= (spec.after ?? 0)) return undefined;
  if (spec.log) original.appendFileSync(spec.log, `${kind} ${syscall} ${typeof path === 'number' ? opened.get(path) : String(path)}\n`);
  return spec.fault === 'stuck' ? 'stuck' : errnoError(syscall, path, options.dest);
}

/** A call that never returns: a thread of the pool waits in open(2) on a FIFO without a writer. */
function stuck() {
  return original.open(spec.fifo, 'r');
}

/** Whether open flags ask to write or create. */
function creates(flags) {
  if (flags === undefined || flags === null) return false;
  if (typeof flags === 'number') return (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT)) !== 0;
  return /[wa+]/.test(flags);
}

function openKind(flags) {
  return creates(flags) ? 'create' : 'open';
}

// What each wrapped function is, and where its path (or descriptor) is among its arguments.
const PATH_CALLS = {
  // name: [kind or function of the arguments giving it, syscall]
  stat: ['stat', 'stat'],
  lstat: ['stat', 'lstat'],
  access: ['stat', 'access'],
  realpath: ['stat', 'realpath'],
  readlink: ['stat', 'readlink'],
  readFile: ['read', 'open'],
  writeFile: ['write', 'open'],
  appendFile: ['write', 'open'],
  mkdir: ['mkdir', 'mkdir'],
  mkdtemp: ['mkdir', 'mkdtemp'],
  unlink: ['remove', 'unlink'],
  rmdir: ['remove', 'rmdir'],
  rm: ['remove', 'rm'],
  readdir: ['readdir', 'scandir'],
  opendir: ['readdir', 'opendir'],
  utimes: ['utimes', 'utime'],
  truncate: ['write', 'open'],
  copyFile: ['write', 'copyfile'],
};
const FD_CALLS = {
  write: ['write', 'write'],
  writev: ['write', 'write'],
  read: ['read', 'read'],
  fsync: ['sync', 'fsync'],
  fdatasync: ['sync', 'fdatasync'],
  fstat: ['stat', 'fstat'],
  ftruncate: ['write', 'ftruncate'],
  futimes: ['utimes', 'futime'],
};

function track(fd, path) {
  if (typeof fd === 'number' && inside(path)) opened.set(fd, String(path));
}

// fs/promises
for (const [name, [kind, syscall]] of Object.entries(PATH_CALLS)) {
  const real = fsp[name];
  if (typeof real !== 'function') continue;
  fsp[name] = async function (...args) {
    const hit = strike(kind, syscall, args[0]);
    if (hit === 'stuck') return stuck();
    if (hit) throw hit;
    return real.apply(this, args);
  };
}
for (const [name, syscall] of [['rename', 'rename'], ['link', 'link']]) {
  const real = fsp[name];
  fsp[name] = async function (from, to, ...rest) {
    const hit = strike('rename', syscall, inside(from) ? from : to, { dest: to });
    if (hit === 'stuck') return stuck();
    if (hit) throw hit;
    return real.call(this, from, to, ...rest);
  };
}
let handlesPatched = false;
fsp.open = async function (path, flags, mode) {
  const hit = strike(openKind(flags), 'open', path);
  if (hit === 'stuck') return stuck();
  if (hit) throw hit;
  const handle = await original.open(path, flags, mode);
  if (!handlesPatched) patchHandles(Object.getPrototypeOf(handle));
  track(handle.fd, path);
  return handle;
};

/** The methods of every FileHandle (its class is not exported: reached through the first one opened). */
function patchHandles(proto) {
  handlesPatched = true;
  const methods = { write: 'write', writev: 'write', writeFile: 'write', appendFile: 'write', truncate: 'write', read: 'read', readFile: 'read', readv: 'read', sync: 'sync', datasync: 'sync', stat: 'stat', utimes: 'utimes' };
  const syscalls = { writeFile: 'write', appendFile: 'write', readFile: 'read', sync: 'fsync', datasync: 'fdatasync', stat: 'fstat', utimes: 'futime', truncate: 'ftruncate', writev: 'write', readv: 'read' };
  for (const [name, kind] of Object.entries(methods)) {
    const real = proto[name];
    if (typeof real !== 'function') continue;
    proto[name] = async function (...args) {
      const hit = strike(kind, syscalls[name] ?? name, this.fd);
      if (hit === 'stuck') return stuck();
      if (hit) throw hit;
      return real.apply(this, args);
    };
  }
  const close = proto.close;
  proto.close = async function () {
    const fd = this.fd;
    const hit = strike('close', 'close', fd);
    opened.delete(fd);
    if (hit === 'stuck') return stuck();
    if (hit) {
      await close.call(this);
      throw hit;
    }
    return close.call(this);
  };
}

// The callback API (file streams call these through the fs module).
function failLater(callback, error) {
  process.nextTick(callback, error);
}
for (const [name, [kind, syscall]] of Object.entries({ ...PATH_CALLS, ...FD_CALLS })) {
  const real = fs[name];
  if (typeof real !== 'function') continue;
  fs[name] = function (...args) {
    const callback = args[args.length - 1];
    const hit = typeof callback === 'function' ? strike(kind, syscall, args[0]) : undefined;
    if (hit === 'stuck') return void stuck().then(callback, callback);
    if (hit) return failLater(callback, hit);
    return real.apply(this, args);
  };
}
for (const name of ['rename', 'link']) {
  const real = fs[name];
  fs[name] = function (from, to, callback) {
    const hit = strike('rename', name, inside(from) ? from : to, { dest: to });
    if (hit === 'stuck') return void stuck().then(callback, callback);
    if (hit) return failLater(callback, hit);
    return real.call(this, from, to, callback);
  };
}
{
  const real = fs.open;
  fs.open = function (path, flags, mode, callback) {
    const done = [flags, mode, callback].find((arg) => typeof arg === 'function');
    const hit = strike(openKind(typeof flags === 'function' ? undefined : flags), 'open', path);
    if (hit === 'stuck') return void stuck().then(done, done);
    if (hit) return failLater(done, hit);
    const args = [path, flags, mode, callback].filter((arg) => arg !== undefined);
    const last = args.length - 1;
    args[last] = (error, fd) => {
      if (!error) track(fd, path);
      done(error, fd);
    };
    return real.apply(this, args);
  };
  const close = fs.close;
  fs.close = function (fd, callback) {
    const hit = strike('close', 'close', fd);
    opened.delete(fd);
    if (hit === 'stuck') return void stuck().then(callback, callback);
    if (hit) return close.call(this, fd, () => callback?.(hit));
    return close.call(this, fd, callback);
  };
}

// The synchronous API.
for (const [name, [kind, syscall]] of Object.entries({ ...PATH_CALLS, ...FD_CALLS })) {
  const real = fs[`${name}Sync`];
  if (typeof real !== 'function') continue;
  fs[`${name}Sync`] = function (...args) {
    const hit = strike(kind, syscall, args[0], { sync: true });
    if (hit) throw hit;
    return real.apply(this, args);
  };
}
for (const name of ['rename', 'link']) {
  const real = fs[`${name}Sync`];
  fs[`${name}Sync`] = function (from, to) {
    const hit = strike('rename', name, inside(from) ? from : to, { dest: to, sync: true });
    if (hit) throw hit;
    return real.call(this, from, to);
  };
}
{
  const real = fs.openSync;
  fs.openSync = function (path, flags, mode) {
    const hit = strike(openKind(flags), 'open', path, { sync: true });
    if (hit) throw hit;
    const fd = real.call(this, path, flags, mode);
    track(fd, path);
    return fd;
  };
  const close = fs.closeSync;
  fs.closeSync = function (fd) {
    const hit = strike('close', 'close', fd, { sync: true });
    opened.delete(fd);
    close.call(this, fd);
    if (hit) throw hit;
  };
}

// ES modules that import these by name see the wrapped functions.
syncBuiltinESMExports();
