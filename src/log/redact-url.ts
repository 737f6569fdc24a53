/** Query parameters that carry a credential (libpq's password and sslpassword, tokens, keys, signatures). */
const CREDENTIAL_PARAM = /pass|secret|token|key|credential|auth|signature|^sig$/i;

export const REDACTED = "REDACTED";

/**
 * `url` safe to log or show: its userinfo password and the value of every query parameter
 * named like a credential (`?password=…`, `sslpassword`, `token` …) replaced. Unparseable
 * text is not echoed at all.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "";
    for (const name of [...parsed.searchParams.keys()]) {
      if (CREDENTIAL_PARAM.test(name)) parsed.searchParams.set(name, REDACTED);
    }
    return parsed.toString();
  } catch {
    return "(unparseable URL)";
  }
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** `text` with every URL in it redacted by {@link redactUrl}; text without `://` is returned as is. */
export function redactUrlsIn(text: string): string {
  return text.includes("://") ? text.replace(URL_IN_TEXT, (url) => redactUrl(url)) : text;
}
