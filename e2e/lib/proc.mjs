// What /proc says of the processes a story started, read as
// tests/support.py reads it.

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** The pids now in /proc. */
function pids() {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);
}

/** Pids whose command line mentions s (like tests/support.py's processes_mentioning). */
export function processesMentioning(s) {
  const found = [];
  for (const pid of pids()) {
    if (pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(s)) found.push(pid);
    } catch { /* exited meanwhile */ }
  }
  return found;
}

/**
 * The fields of /proc/<pid>/stat after the command's closing parenthesis
 * (the state is the first, the parent the second, utime the 12th), or null
 * once it has gone.
 */
export function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The pid of pid's parent. */
export function parentOf(pid) {
  return Number(statFields(pid)?.[1]);
}

/** VmRSS of pid in bytes; 0 once it has gone. */
function vmRss(pid) {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** What the process tree under pid holds: the sum of VmRSS (tests/support.py's tree_rss). */
export function treeRss(pid) {
  const children = new Map();
  for (const p of pids()) {
    const f = statFields(p);
    if (!f || f[0] === 'Z') continue;
    const ppid = Number(f[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), p]);
  }
  let rss = 0;
  for (const todo = [pid]; todo.length > 0;) {
    const p = todo.pop();
    rss += vmRss(p);
    todo.push(...(children.get(p) ?? []));
  }
  return rss;
}

/** The executable pid runs, as /proc/<pid>/exe names it. */
export function exeOf(pid) {
  return readlinkSync(`/proc/${pid}/exe`);
}
