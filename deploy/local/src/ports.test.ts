import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { LocalStackError } from './errors.ts'
import { assertPortsFree, choosePorts, distinctPortPicker, freePort } from './ports.ts'

describe('choosePorts', () => {
  it('keeps given ports and fills the others with distinct free ones', async () => {
    const ports = await choosePorts({ kafka: 65001 })
    expect(ports.kafka).toBe(65001)
    expect(new Set(Object.values(ports)).size).toBe(4)
  })

  it('rejects the same port for two roles', async () => {
    await expect(choosePorts({ kafka: 65002, registry: 65002 })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    })
  })
})

describe('assertPortsFree', () => {
  it('names the role, the port and how to change it when a port is taken', async () => {
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const busy = (server.address() as net.AddressInfo).port
    try {
      const free = await choosePorts()
      const error = await assertPortsFree(
        { ...free, registry: busy },
        { registry: 'STACK_REGISTRY_PORT' },
      ).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(LocalStackError)
      expect((error as LocalStackError).code).toBe('PORT_BUSY')
      expect((error as LocalStackError).message).toContain(`port ${busy} (schema registry HTTP)`)
      expect((error as LocalStackError).message).toContain('STACK_REGISTRY_PORT')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('freePort', () => {
  it('gives the preferred port when it is free, another one when it is taken', async () => {
    const preferred = await freePort()
    expect(await freePort(preferred)).toBe(preferred)
    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(preferred, '127.0.0.1', () => resolve()))
    try {
      const other = await freePort(preferred)
      expect(other).not.toBe(preferred)
      expect(other).toBeGreaterThan(0)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  })
})

describe('distinctPortPicker', () => {
  it('never hands out a port twice, although the port is still free the second time', async () => {
    const pick = distinctPortPicker()
    const preferred = await freePort()
    expect(await pick(preferred)).toBe(preferred)
    // Nothing listens on it: plain freePort would hand it out again.
    expect(await freePort(preferred)).toBe(preferred)
    const second = await pick(preferred)
    expect(second).not.toBe(preferred)
    const more = await Promise.all([pick(), pick(), pick()])
    expect(new Set([preferred, second, ...more]).size).toBe(5)
  })
})
