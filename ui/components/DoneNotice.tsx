import type { Ref } from 'preact';
import { Notice } from './Notice.js';

/** What just happened, focusable so that it can take the focus (see `useDoneNotice`). */
export function DoneNotice({
  message,
  noticeRef,
  extraClass,
}: {
  message: string | null;
  noticeRef: Ref<HTMLDivElement>;
  /** A class besides `focus-target`, for where the notice sits. */
  extraClass?: string;
}) {
  if (!message) return null;
  return (
    <div ref={noticeRef} tabIndex={-1} class={extraClass ? `focus-target ${extraClass}` : 'focus-target'}>
      <Notice tone="success">{message}</Notice>
    </div>
  );
}
