import type { ComponentChildren } from 'preact';
import { useTitle } from '../hooks.js';

/** The page's one `<h1>`, a sentence saying what the page is for, and its main actions. */
export function PageHeader({
  title,
  description,
  actions,
  back,
}: {
  title: string;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  back?: { href: string; label: string };
}) {
  useTitle(title);
  return (
    <header class="page-header">
      <div>
        {back ? (
          <a class="back-link" href={back.href}>
            ← {back.label}
          </a>
        ) : null}
        <h1>{title}</h1>
        {description ? <p class="page-description">{description}</p> : null}
      </div>
      {actions ? <div class="page-actions">{actions}</div> : null}
    </header>
  );
}
