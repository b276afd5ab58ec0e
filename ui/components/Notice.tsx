import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.js';

/** A failure, said in words; announced to screen readers as it appears. */
export function ErrorNotice({ error, title }: { error: ApiError | undefined; title?: string }) {
  if (!error) return null;
  return (
    <div class="notice notice-error" role="alert">
      {title ? <strong>{title} </strong> : null}
      {error.message}
      {error.requestId ? <span class="notice-meta"> Request ID: {error.requestId}</span> : null}
    </div>
  );
}

export function Notice({
  tone = 'info',
  children,
}: {
  tone?: 'info' | 'warning' | 'success';
  children: ComponentChildren;
}) {
  return (
    <div class={`notice notice-${tone}`} role={tone === 'info' ? undefined : 'status'}>
      {children}
    </div>
  );
}
