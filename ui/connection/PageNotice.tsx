import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** What just happened on the connection's page, and the one thing to do next, if any. */
export interface PageNoticeState {
  tone: 'success' | 'warning';
  text: string;
  action?: { label: string; run: () => void };
}

/** The page's notice, which takes the focus as it appears: the button that led to it may be gone. */
export function usePageNotice() {
  const [notice, setNotice] = useState<PageNoticeState | null>(null);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (notice) ref.current?.focus();
  }, [notice]);
  return { notice, setNotice, ref };
}

export function PageNotice({
  notice,
  noticeRef,
  onDismiss,
}: {
  notice: PageNoticeState | null;
  noticeRef: Ref<HTMLDivElement>;
  onDismiss: () => void;
}) {
  if (!notice) return null;
  return (
    <div ref={noticeRef} tabIndex={-1} class="focus-target">
      <div class={`notice notice-${notice.tone} page-notice`} role="status">
        <p>{notice.text}</p>
        <div class="row">
          {notice.action ? (
            <button type="button" class="button button-small button-primary" onClick={notice.action.run}>
              {notice.action.label}
            </button>
          ) : null}
          <button type="button" class="button button-small button-quiet" onClick={onDismiss}>
            Dismiss<span class="visually-hidden"> this message</span>
          </button>
        </div>
      </div>
    </div>
  );
}
