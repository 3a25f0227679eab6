/** Request counters for `GET /__admin/stats`. */
export class Stats {
  readonly startedAt = Date.now()
  requests = 0
  readonly byRoute = new Map<string, Map<number, number>>()

  record(route: string, status: number): void {
    this.requests++
    let m = this.byRoute.get(route)
    if (!m) {
      m = new Map()
      this.byRoute.set(route, m)
    }
    m.set(status, (m.get(status) ?? 0) + 1)
  }

  reset(): void {
    this.requests = 0
    this.byRoute.clear()
  }

  toJSON(): Record<string, unknown> {
    const routes: Record<string, Record<string, number>> = {}
    for (const [route, m] of this.byRoute) routes[route] = Object.fromEntries([...m].map(([s, n]) => [String(s), n]))
    return { requests: this.requests, routes }
  }
}
