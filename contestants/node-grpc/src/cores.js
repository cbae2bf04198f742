'use strict';
// How many cores this process may use: the CPUs of its affinity mask (what
// `taskset` and stackbench's `cpus` set), lowered to a cgroup CPU quota when
// there is one (stackbench's `cpu_quota`). os.availableParallelism() counts
// every online CPU and ignores both, so it is only the fallback.
//
// node-fastify, node-db and node-grpc carry this file as three identical
// copies; crates/cli/tests/contestant_copies.rs keeps them so.

const fs = require('node:fs');
const os = require('node:os');

// "0-3,8,10-11" -> 7
function countCpuList(list) {
  let n = 0;
  for (const part of list.trim().split(',')) {
    if (part === '') continue;
    const [lo, hi] = part.split('-').map(Number);
    n += hi === undefined ? 1 : hi - lo + 1;
  }
  return n;
}

function affinityCpus() {
  try {
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
    if (m) return countCpuList(m[1]);
  } catch {
    // not Linux: fall through
  }
  return os.availableParallelism();
}

// cgroup v2 `cpu.max` ("max 100000" or "150000 100000"), else v1 cfs quota.
function quotaCpus() {
  try {
    const cgroups = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n');
    for (const line of cgroups) {
      const [, controllers, path] = line.split(':');
      if (path === undefined) continue;
      if (controllers === '') {
        const [quota, period] = fs.readFileSync(`/sys/fs/cgroup${path}/cpu.max`, 'utf8').trim().split(/\s+/);
        if (quota !== 'max') return Math.ceil(Number(quota) / Number(period));
      } else if (controllers.split(',').includes('cpu')) {
        const dir = `/sys/fs/cgroup/cpu,cpuacct${path}`;
        const quota = Number(fs.readFileSync(`${dir}/cpu.cfs_quota_us`, 'utf8'));
        const period = Number(fs.readFileSync(`${dir}/cpu.cfs_period_us`, 'utf8'));
        if (quota > 0) return Math.ceil(quota / period);
      }
    }
  } catch {
    // no cgroup files: no quota
  }
  return Infinity;
}

function cores() {
  return Math.max(1, Math.min(affinityCpus(), quotaCpus()));
}

module.exports = { cores, countCpuList };
