/**
 * Readiness as a set of named checks owned by the components that know them
 * ("table" is caught up, "enrichment-api" reachable, "consumer" not paused).
 * The service is ready when every check is ready; /readyz lists them all so an
 * operator sees *why* an instance is not ready.
 */
export interface CheckState {
  ready: boolean
  detail?: string
  since: string
}

export class Readiness {
  private readonly checks = new Map<string, CheckState>()
  private readonly listeners = new Set<(name: string, state: CheckState) => void>()

  /** Declares a check that starts not ready (e.g. "catching up"). */
  register(name: string, detail = 'starting'): void {
    if (!this.checks.has(name)) this.set(name, false, detail)
  }

  set(name: string, ready: boolean, detail?: string): void {
    const prev = this.checks.get(name)
    if (prev && prev.ready === ready && prev.detail === detail) return
    const state: CheckState = { ready, since: prev && prev.ready === ready ? prev.since : new Date().toISOString(), ...(detail ? { detail } : {}) }
    this.checks.set(name, state)
    for (const l of this.listeners) l(name, state)
  }

  isReady(): boolean {
    for (const c of this.checks.values()) if (!c.ready) return false
    return true
  }

  snapshot(): { ready: boolean; checks: Record<string, CheckState> } {
    return { ready: this.isReady(), checks: Object.fromEntries(this.checks) }
  }

  onChange(listener: (name: string, state: CheckState) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}
