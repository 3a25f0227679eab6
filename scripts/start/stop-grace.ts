/**
 * How long a stopping service or simulator gets before it is killed: longer than a
 * service's own shutdown limit (GracefulShutdown, 30 s), so that a slow shutdown is
 * cut short by the service itself (which logs it) and not by `npm start`.
 */
export const CHILD_STOP_GRACE_MS = 35_000
