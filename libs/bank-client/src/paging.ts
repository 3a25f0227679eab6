import { BankClientError } from './errors.ts'
import type { PageInfo } from './model/common.ts'

/** One page as the paging loop sees it: the COBS paging fields plus the page's items. */
export interface Page<T> extends PageInfo {
  items: T[]
}

/** Fetches page `page` (0-based). */
export type PageSource<T> = (page: number) => Promise<Page<T>>

/** Thrown by the loop when the bank's paging fields cannot be followed safely. */
export class PagingError extends BankClientError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'BANK_PAGING_INVALID', details })
  }
}

/**
 * Walks pages from `startPage` to the end and yields each page.
 *
 * The end is reached when the page has no `nextPage` AND `pageNumber + 1 >= pageCount`.
 * Both are checked because banks differ: some omit `nextPage` on every page, some report a
 * `pageCount` that includes a trailing empty page when the total is an exact multiple of the
 * page size. Empty pages are yielded (with no items) rather than ending the walk early; a
 * `nextPage` that does not move forward, or a page other than the one asked for, is refused
 * instead of looping or repeating items.
 */
export async function* walkPages<T>(
  source: PageSource<T>,
  startPage = 0,
): AsyncGenerator<Page<T>, void, undefined> {
  let page = startPage
  for (;;) {
    const current = await source(page)
    // A bank that ignores the page parameter would otherwise hand out page 0 again and again.
    if (current.pageNumber !== page) {
      throw new PagingError(`asked the bank for page ${page}, it answered page ${current.pageNumber}`, {
        page,
        pageNumber: current.pageNumber,
      })
    }
    yield current
    const next = current.nextPage
    if (next === undefined || next === null) {
      if (page + 1 >= current.pageCount) return
      page += 1
      continue
    }
    if (!Number.isInteger(next) || next <= page) {
      throw new PagingError(
        `the bank answered page ${page} with nextPage ${String(next)}, which does not move forward`,
        { page, nextPage: next },
      )
    }
    page = next
  }
}

/** Yields the items of every page, in order. */
export async function* walkItems<T>(
  source: PageSource<T>,
  startPage = 0,
): AsyncGenerator<T, void, undefined> {
  for await (const page of walkPages(source, startPage)) yield* page.items
}
