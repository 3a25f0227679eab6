/**
 * Preloaded (`node --import`) into every process `npm start` runs. Its parent
 * holds the other end of an IPC channel; when the parent is gone for any reason
 * (a failed start-up, Ctrl-C twice, kill -9 of `npm start`, a closed terminal),
 * the channel closes and this process stops the way SIGTERM stops it: its own
 * shutdown (transactions aborted or committed, consumer group left). Without it
 * the services of a dead `npm start` kept running, bound to their ports and
 * members of their groups, and the next `npm start` met them there.
 *
 * Nothing else of the IPC channel is used; it does not keep this process alive.
 */
import { CHILD_STOP_GRACE_MS } from './stop-grace.ts'

if (process.channel !== undefined) {
  process.channel.unref()
  process.once('disconnect', () => {
    process.kill(process.pid, 'SIGTERM')
    // A process with no SIGTERM handler is gone already; one whose shutdown hangs is ended.
    setTimeout(() => process.exit(1), CHILD_STOP_GRACE_MS).unref()
  })
}
