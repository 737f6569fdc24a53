/** What one cluster's apiserver may send this service: past these, a request fails instead of growing the process. */

/**
 * The most an answer may be, unless its request says otherwise: an object (a Lease, a patched
 * node) is under 1.5 MiB in etcd, and the NodeMetrics of 5,000 nodes are ~2 MiB. A server
 * sending more is not an apiserver: the request fails instead of growing the process.
 */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The most a LIST page (500 objects) may be: 256 KiB an object on average, far above what nodes, pods and events are. */
export const MAX_LIST_PAGE_BYTES = 128 * 1024 * 1024;

/** How long a request (a watch included) may wait for its answer's headers: a server that accepts and never answers fails. */
export const HEADERS_TIMEOUT_MS = 10_000;
