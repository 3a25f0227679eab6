import cliProgress from 'cli-progress'

export interface ProgressSnapshot {
  backfillId: string
  /** Rows processed (enriched or rejected), over every run of this backfill. */
  done: number
  /** Rows known so far: the file's line count until loading ends, then the exact number. */
  total: number
  loaded: number
  loadComplete: boolean
  /** Why the backfill is waiting for live traffic, if it is. */
  yielding: string | undefined
}

export interface ProgressReporter {
  update(snapshot: ProgressSnapshot): void
  stop(): void
}

/**
 * On a terminal: a cli-progress bar with count, rate and ETA. Otherwise (CI,
 * pipes, log collectors): one JSON line on stdout every `intervalMs`, which a
 * machine can read and a human can still follow.
 */
export function createProgressReporter(options: {
  tty: boolean
  intervalMs: number
  write?: (line: string) => void
}): ProgressReporter {
  const write = options.write ?? ((line: string) => process.stdout.write(line))
  const started = Date.now()
  let first: { at: number; done: number } | undefined
  let last: ProgressSnapshot | undefined
  const rate = (s: ProgressSnapshot): number => {
    if (first === undefined) return 0
    const seconds = (Date.now() - first.at) / 1000
    return seconds <= 0 ? 0 : (s.done - first.done) / seconds
  }

  if (options.tty) {
    const bar = new cliProgress.SingleBar(
      {
        format:
          ' {bar} {percentage}% | {value}/{total} rows | {speed} rows/s | ETA {eta_formatted} | {status}',
        etaBuffer: 200,
        hideCursor: true,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    )
    let begun = false
    return {
      update(s) {
        first ??= { at: Date.now(), done: s.done }
        const payload = {
          speed: Math.round(rate(s)),
          status: s.yielding === undefined ? (s.loadComplete ? 'enriching' : `loading (${s.loaded})`) : `yielding: ${s.yielding}`,
        }
        if (!begun) {
          bar.start(Math.max(s.total, s.done), s.done, payload)
          begun = true
        } else {
          bar.setTotal(Math.max(s.total, s.done))
          bar.update(s.done, payload)
        }
      },
      stop() {
        if (begun) bar.stop()
      },
    }
  }

  const emit = (): void => {
    if (last === undefined) return
    const s = last
    const r = rate(s)
    write(
      `${JSON.stringify({
        event: 'progress',
        backfillId: s.backfillId,
        done: s.done,
        total: s.total,
        loaded: s.loaded,
        loadComplete: s.loadComplete,
        rowsPerSecond: Math.round(r * 10) / 10,
        etaSeconds: r > 0 ? Math.round((s.total - s.done) / r) : null,
        elapsedSeconds: Math.round((Date.now() - started) / 1000),
        yielding: s.yielding ?? null,
      })}\n`,
    )
  }
  const timer = setInterval(emit, options.intervalMs)
  timer.unref()
  return {
    update(s) {
      first ??= { at: Date.now(), done: s.done }
      last = s
    },
    stop() {
      clearInterval(timer)
      emit()
    },
  }
}
