import net from 'node:net'
import { LocalStackError } from './errors.ts'

export interface StackPorts {
  /** Broker PLAINTEXT listener (clients). */
  kafka: number
  /** KRaft controller listener. */
  controller: number
  /** Registry HTTP API. */
  registry: number
  /** Registry management interface (/health, /metrics); Quarkus defaults it to 9000, which collides easily. */
  registryManagement: number
}

export const PORT_ROLES: Record<keyof StackPorts, string> = {
  kafka: 'Kafka broker',
  controller: 'Kafka controller',
  registry: 'schema registry HTTP',
  registryManagement: 'schema registry management',
}

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(server))
  })
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()))
}

/**
 * A free port on 127.0.0.1: `preferred` when it is free, otherwise any. The
 * port is released before this resolves, so another process could still take
 * it first; callers that need several distinct ports use choosePorts.
 */
export async function freePort(preferred = 0): Promise<number> {
  const tryPort = async (port: number): Promise<number | undefined> => {
    const server = await listen(port).catch(() => undefined)
    if (server === undefined) return undefined
    const got = (server.address() as net.AddressInfo).port
    await close(server)
    return got
  }
  const port = (preferred > 0 ? await tryPort(preferred) : undefined) ?? (await tryPort(0))
  if (port === undefined) throw new LocalStackError('no free port on 127.0.0.1', { code: 'PORT_BUSY' })
  return port
}

/**
 * A `freePort` that never hands out the same port twice. For a caller that
 * picks the ports of several servers before they all listen: the kernel may
 * offer a port again once the probe released it, and a server started later
 * on a port picked earlier would then find it taken by another one (seen in
 * the fault suite: the consent gateway's port went to a metrics server, whose
 * /healthz then answered for the gateway).
 */
export function distinctPortPicker(): (preferred?: number) => Promise<number> {
  const given = new Set<number>()
  return async (preferred = 0) => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await freePort(attempt === 0 ? preferred : 0)
      if (!given.has(port)) {
        given.add(port)
        return port
      }
    }
    throw new LocalStackError('no free port on 127.0.0.1 that was not handed out already', { code: 'PORT_BUSY' })
  }
}

/**
 * Picks free loopback ports for the roles not given. All are held open together
 * while choosing, so the four are distinct; another process could still grab one
 * before the JVM binds it, which the start-up reports as a busy port.
 */
export async function choosePorts(given: Partial<StackPorts> = {}): Promise<StackPorts> {
  const held: net.Server[] = []
  try {
    const pick = async (role: keyof StackPorts): Promise<number> => {
      const fixed = given[role]
      if (fixed !== undefined) return fixed
      const server = await listen(0)
      held.push(server)
      return (server.address() as net.AddressInfo).port
    }
    const ports: StackPorts = {
      kafka: await pick('kafka'),
      controller: await pick('controller'),
      registry: await pick('registry'),
      registryManagement: await pick('registryManagement'),
    }
    const values = Object.values(ports)
    if (new Set(values).size !== values.length) {
      throw new LocalStackError(`the stack needs four different ports, got ${JSON.stringify(ports)}`, {
        code: 'INVALID_OPTION',
        details: { ports },
      })
    }
    return ports
  } finally {
    await Promise.all(held.map(close))
  }
}

/** A port to check, with the role named in the "port busy" message and how to move it. */
export interface PortCheck {
  port: number
  role: string
  hint?: string
}

/** Throws PORT_BUSY naming the role and the variable/flag to change it when a port is taken on 127.0.0.1. */
export async function assertPortsFree(
  ports: Partial<StackPorts>,
  hint: Partial<Record<keyof StackPorts, string>> = {},
) {
  await assertPortsAvailable(
    (Object.keys(ports) as Array<keyof StackPorts>).flatMap((role) => {
      const port = ports[role]
      return port === undefined ? [] : [{ port, role: PORT_ROLES[role], ...(hint[role] === undefined ? {} : { hint: hint[role] }) }]
    }),
  )
}

/** assertPortsFree for ports of any role (the Kafka nodes 2..n of a cluster). */
export async function assertPortsAvailable(checks: PortCheck[]) {
  for (const { port, role, hint } of checks) {
    try {
      await close(await listen(port))
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      const how = hint ? ` or choose another with ${hint}` : ''
      throw new LocalStackError(
        `port ${port} (${role}) on 127.0.0.1 is not available (${code}); stop what uses it${how}`,
        { code: 'PORT_BUSY', cause: err, details: { role, port } },
      )
    }
  }
}
