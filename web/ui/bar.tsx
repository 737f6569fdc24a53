// A horizontal bar of parts of a whole (requests and usage of allocatable, say), drawn with
// divs and told in words beside it: the picture is a help, the text is the figure.

export interface BarPart {
  label: string;
  value: number;
  /** Class of the part's colour (bar-requests, bar-usage, …). */
  kind: string;
  text: string;
}

/** Parts drawn as rows over one track whose full width is `whole`; a part over the whole fills it and says so. */
export function Bar({ title, whole, wholeText, parts }: { title: string; whole: number; wholeText: string; parts: BarPart[] }) {
  return (
    <div class="bar-block">
      <div class="bar-title">
        <strong>{title}</strong> <span class="muted">{wholeText}</span>
      </div>
      {parts.map((part) => {
        const ratio = whole > 0 ? part.value / whole : 0;
        return (
          <div class="bar-row" key={part.label}>
            <span class="bar-label">{part.label}</span>
            <span class="bar-track" aria-hidden="true">
              <span class={`bar-fill ${part.kind}${ratio > 1 ? " over" : ""}`} style={{ width: `${Math.min(100, Math.max(0, ratio * 100)).toFixed(2)}%` }} />
            </span>
            <span class="bar-text">{part.text}</span>
          </div>
        );
      })}
    </div>
  );
}
