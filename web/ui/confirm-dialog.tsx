// A modal question before an action that is hard to take back: the browser's own <dialog>,
// so focus is held inside it and Escape cancels.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

interface Props {
  /** The data-confirm hook: what is asked about ("drain", "cordon"). */
  kind: string;
  title: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}

export function ConfirmDialog({ kind, title, confirmLabel, onConfirm, onCancel, children }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current!;
    element.showModal();
    return () => element.open && element.close();
  }, []);
  return (
    <dialog ref={dialog} class="confirm" data-confirm={kind} aria-labelledby={`confirm-${kind}-title`} onCancel={(event) => (event.preventDefault(), onCancel())}>
      <h2 id={`confirm-${kind}-title`}>{title}</h2>
      {children}
      <div class="dialog-actions">
        <button type="button" onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" class="primary" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
