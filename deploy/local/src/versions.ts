import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The pinned runtime. Bumping a version here re-fetches into a new cache folder. */
export const KAFKA_VERSION = '3.9.2'
/** 3.3.1 (the recipe's pin) is not on Maven Central; 3.3.3 is the newest that is. */
export const APICURIO_VERSION = '3.3.3'
/** Pinned because Maven 3.8 resolves a bare `dependency:` prefix to the ancient 2.8. */
export const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1'

/** Kafka 3.9 runs on Java 17+; Apicurio 3.3 is compiled for Java 21 (class file 65). */
export const KAFKA_MIN_JAVA = 17
export const REGISTRY_MIN_JAVA = 21

/** The repository root: this file is deploy/local/src/versions.ts. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
/** Git-ignored; holds the Maven repository and the unpacked runtimes. */
export const DEFAULT_CACHE_DIR = path.join(REPO_ROOT, '.cache')
/** The pom whose runtime dependencies are the broker's class path. */
export const KAFKA_RUNTIME_POM = path.join(REPO_ROOT, 'deploy/local/runtime/pom.xml')

export interface RuntimePaths {
  cacheDir: string
  mavenRepo: string
  /** Folder of jars; the broker's class path is `<kafkaLib>/*`. */
  kafkaLib: string
  kafkaDir: string
  /** Unpacked Quarkus fast-jar (quarkus-run.jar, lib/, app/, quarkus/). */
  apicurioDir: string
}

export function runtimePaths(cacheDir: string = DEFAULT_CACHE_DIR): RuntimePaths {
  const kafkaDir = path.join(cacheDir, `kafka-${KAFKA_VERSION}`)
  return {
    cacheDir,
    mavenRepo: path.join(cacheDir, 'm2'),
    kafkaDir,
    kafkaLib: path.join(kafkaDir, 'lib'),
    apicurioDir: path.join(cacheDir, `apicurio-${APICURIO_VERSION}`),
  }
}
