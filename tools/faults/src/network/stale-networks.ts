import { readFileSync } from 'node:fs'
import { ownerOf } from './addresses.ts'
import { Bridge } from './bridge.ts'
import { run } from './command.ts'
import { NamespaceHost } from './namespace-host.ts'

/** True while `pid` is a live node process: a run that may still own its network. */
function ownerAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node')
  } catch {
    return false
  }
}

/**
 * Removes the namespaces, veth ends and bridges of runs whose owner is gone (a
 * run killed with SIGKILL, or a machine that lost power mid-run, never ran its
 * teardown). Those of live runs, ours or a parallel one's, are left alone.
 */
export function removeStaleNetworks(): string[] {
  const removed: string[] = []
  const namespaces = run('ip', ['netns', 'list'], { ignoreFailure: true })
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
  for (const ns of namespaces) {
    const owner = ownerOf(ns)
    if (owner === undefined || ownerAlive(owner)) continue
    NamespaceHost.destroy(ns)
    removed.push(ns)
  }
  const links = [...run('ip', ['-o', 'link', 'show'], { ignoreFailure: true }).matchAll(/^\d+:\s+([^:@\s]+)/gm)].map((m) => m[1]!)
  for (const link of links) {
    const owner = ownerOf(link)
    if (owner === undefined || ownerAlive(owner)) continue
    if (link.endsWith('b')) Bridge.destroy(link)
    else run('ip', ['link', 'del', link], { ignoreFailure: true })
    removed.push(link)
  }
  return removed
}
