/**
 * How long `connect` waits for the browser to come back: a person reads a
 * consent page, may have to sign in first, may need a second factor. Kept
 * apart from sign-in.ts so the command's flags load without the SDK.
 */
export const SIGN_IN_WAIT_MS = 5 * 60_000
