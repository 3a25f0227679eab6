/** One waiter woken by the next `wake()`: the commit loop waiting for finished records. */
export class WakeSignal {
  #wake: (() => void) | undefined

  wake(): void {
    const w = this.#wake
    this.#wake = undefined
    w?.()
  }

  /** Until the next wake(). */
  wait(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve))
  }

  /** Until the next wake() or `deadline` (epoch ms), whichever comes first. */
  waitUntil(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
      this.#wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }
}
