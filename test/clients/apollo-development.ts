/**
 * Apollo Client prints its warnings only in development mode: imported before @apollo/client,
 * this turns it on, so a test hears what a developer running it would.
 */
(globalThis as { __DEV__?: boolean }).__DEV__ = true;
