import { readFileSync } from "node:fs";
import ts from "typescript";

/**
 * A pure module of the web UI (web/ui, built by Vite, not by this project's tsc), compiled from
 * its source and imported, so unit tests read the code the browser runs without a browser.
 * Only for modules that import nothing.
 */
export async function importWebModule(path: string): Promise<any> {
  const source = readFileSync(new URL(`../../../web/ui/${path}`, import.meta.url), "utf8");
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  if (/^\s*import\s/m.test(outputText)) throw new Error(`${path} imports other modules; importWebModule takes only modules that import nothing`);
  return import(`data:text/javascript;base64,${Buffer.from(outputText).toString("base64")}`);
}
