/**
 * Runs `work` and fails with `explain()` if it has not settled within `ms`.
 * Meant for set-up hooks: vitest's own hook timeout says only that the hook
 * timed out, and nothing of where it stood; give this a deadline a little
 * under that timeout so the explanation is what the report shows.
 */
export async function withinDeadline<T>(ms: number, explain: () => string, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${ms} ms: ${explain()}`)), ms)
  })
  try {
    return await Promise.race([work(), expired])
  } finally {
    clearTimeout(timer)
  }
}
