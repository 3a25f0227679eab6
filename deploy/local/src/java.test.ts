import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalStackError } from './errors.ts'
import { findJava, parseJavaMajor } from './java.ts'

describe('parseJavaMajor', () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "25" 2025-09-16', 25],
    ['openjdk version "21.0.4" 2024-07-16 LTS', 21],
    ['java version "1.8.0_402"', 8],
    ['openjdk version "23-ea" 2024-09-17', 23],
  ])('reads %s as %i', (output, major) => {
    expect(parseJavaMajor(output)).toBe(major)
  })

  it('returns undefined for output that is not a java version banner', () => {
    expect(parseJavaMajor('bash: java: command not found')).toBeUndefined()
  })
})

describe('findJava', () => {
  let dir: string
  // A fake JDK home whose `java -version` prints the banner of the given release.
  async function fakeHome(name: string, banner: string): Promise<string> {
    const home = path.join(dir, name)
    await mkdir(path.join(home, 'bin'), { recursive: true })
    const bin = path.join(home, 'bin', 'java')
    await writeFile(bin, `#!/bin/sh\necho '${banner}' >&2\n`)
    await chmod(bin, 0o755)
    return home
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'find-java-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('prefers the named home variable over anything else when it is new enough', async () => {
    const home = await fakeHome('jdk21', 'openjdk version "21.0.4" 2024-07-16')
    const java = await findJava({
      min: 21,
      homeVars: ['APICURIO_JAVA_HOME'],
      purpose: 'test',
      env: { APICURIO_JAVA_HOME: home },
    })
    expect(java).toEqual({ bin: path.join(home, 'bin', 'java'), major: 21, source: '$APICURIO_JAVA_HOME' })
  })

  it('skips a named home that is too old and says what it found when nothing fits', async () => {
    const home = await fakeHome('jdk11', 'openjdk version "11.0.2" 2019-01-15')
    const error = await findJava({
      min: 99,
      homeVars: ['APICURIO_JAVA_HOME'],
      purpose: 'The schema registry',
      env: { APICURIO_JAVA_HOME: home, PATH: '' },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LocalStackError)
    expect((error as LocalStackError).code).toBe('JAVA_NOT_FOUND')
    expect((error as LocalStackError).message).toContain('The schema registry needs Java 99 or newer')
    expect((error as LocalStackError).message).toContain('Java 11 ($APICURIO_JAVA_HOME)')
  })
})
