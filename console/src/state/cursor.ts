// Cursor paging (D5): each list answer carries `nextToken`; sending it back returns the next
// page however deep. The tokens that led to each page so far are kept, so Previous is a step back.

/** The tokens of the pages visited, the first page's being `undefined`. */
export type Trail = readonly (string | undefined)[];

export const START: Trail = [undefined];

/** The token that fetches the current page. */
export const tokenOf = (trail: Trail): string | undefined => trail[trail.length - 1];

/** The current page's number, from 1. */
export const pageOf = (trail: Trail): number => trail.length;

/** The trail after Next, with the current page's `nextToken`. */
export const forward = (trail: Trail, nextToken: string): Trail => [...trail, nextToken];

/** The trail after Previous; the first page stays the first. */
export const back = (trail: Trail): Trail => (trail.length > 1 ? trail.slice(0, -1) : trail);
