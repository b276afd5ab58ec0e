import { Layout } from '../components/Layout.js';
import { useTitle } from '../hooks.js';
import { session } from '../session.js';

function NotFoundBody() {
  useTitle('Page not found');
  return (
    <section class="card card-narrow">
      <h1>Page not found</h1>
      <p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
      <p>
        <a class="button button-primary" href="/">
          Go to the overview
        </a>
      </p>
    </section>
  );
}

/** Any UI address that names no page (contract §12: the UI shows its own "not found"). */
export function NotFoundPage() {
  if (session.value) {
    return (
      <Layout>
        <NotFoundBody />
      </Layout>
    );
  }
  return (
    <main id="main" class="bare" tabIndex={-1}>
      <NotFoundBody />
    </main>
  );
}
