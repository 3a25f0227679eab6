import { EnrichmentApiError, EnrichmentNotFoundError, type EnrichmentClient } from '@tep/enrichment-client'
import { errorCode } from '@tep/errors'
import type { EntityFetcher } from './refresh-batch.ts'
import { merchantData, shopData } from './snapshot-mapping.ts'

export type LatencyObserver = (operation: 'getShop' | 'getMerchant', outcome: string, seconds: number) => void

/**
 * The refresher's reads over `@tep/enrichment-client`. A 404 means the entity
 * is gone (ASSUMPTION, as modelled in schemas/openapi/enrichment-v5.yaml): it
 * becomes a tombstone. Everything else propagates; `isRecordScoped` tells the
 * batch which errors concern only the key asked for.
 */
export function enrichmentFetcher(
  client: Pick<EnrichmentClient, 'getShop' | 'getMerchant'>,
  observe?: LatencyObserver,
): EntityFetcher {
  async function timed<T>(operation: 'getShop' | 'getMerchant', call: () => Promise<T>): Promise<T | null> {
    const started = performance.now()
    try {
      const result = await call()
      observe?.(operation, 'ok', (performance.now() - started) / 1000)
      return result
    } catch (err) {
      const notFound = err instanceof EnrichmentNotFoundError
      observe?.(operation, notFound ? 'not_found' : errorCode(err), (performance.now() - started) / 1000)
      if (notFound) return null
      throw err
    }
  }
  return {
    shop: async (uid, signal) => {
      const shop = await timed('getShop', () => client.getShop(uid, signal === undefined ? {} : { signal }))
      return shop === null ? null : shopData(shop)
    },
    merchant: async (uid, signal) => {
      const merchant = await timed('getMerchant', () =>
        client.getMerchant(uid, signal === undefined ? {} : { signal }),
      )
      return merchant === null ? null : merchantData(merchant)
    },
  }
}

/** A 400 for one uid (an identifier the API refuses): skip that key, keep the batch. */
export function isRecordScopedApiError(err: unknown): boolean {
  return err instanceof EnrichmentApiError && err.recordScoped
}
