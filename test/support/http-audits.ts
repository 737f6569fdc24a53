/**
 * graphql-http server audits that do not end "ok" by a deliberate choice, each explained in
 * the README ("GraphQL over HTTP conformance"). Any other result that is not ok fails.
 */
export const ACCEPTED_AUDITS: Record<string, string> = {
  // Optional (MAY) GET forms that CSRF prevention refuses: a GET without a JSON content
  // type or a preflight header could be sent by any web page in the user's browser.
  "5A70": "notice: GET from an HTML form is refused by CSRF prevention",
  D6D5: "notice: GET without a preflight header is refused by CSRF prevention",
  "6A70": "notice: GET without a preflight header is refused by CSRF prevention",
};
