// Routes under /ui/ with the History API: links are real links (open in a new tab, copy the
// address), and a click on one inside the page only changes the view.
import { useEffect, useState } from "preact/hooks";
import { parseRoute, type Route } from "./route";

export { parseRoute, type Route };

const listeners = new Set<() => void>();

export function navigate(href: string): void {
  history.pushState(null, "", href);
  for (const listener of listeners) listener();
}

/** The current route, following navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return route;
}

/** Same-origin /ui/ links clicked without modifier keys navigate inside the page. */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = (event.target as HTMLElement).closest("a");
    if (!link || link.target || link.origin !== location.origin || !link.pathname.startsWith("/ui/")) return;
    event.preventDefault();
    navigate(link.pathname + link.search);
  });
}
