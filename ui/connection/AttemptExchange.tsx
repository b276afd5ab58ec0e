import type { AttemptRequest, AttemptResponse } from '../api-types.js';
import { HeaderTable } from './HeaderTable.js';

/** A response body as a person reads it: JSON formatted when it is whole JSON, else as it came. */
function readable(body: string, truncated: boolean): string {
  if (truncated) return body;
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function RequestPart({ request, number }: { request: AttemptRequest | null; number: number }) {
  return (
    <section class="exchange-part" aria-label={`Request of attempt ${number}`}>
      <h3>Request</h3>
      {request ? (
        <>
          <p class="mono exchange-line">
            <strong>{request.method}</strong> <span class="break">{request.url}</span>
          </p>
          <HeaderTable headers={request.headers} caption={`Request headers of attempt ${number}`} />
        </>
      ) : (
        <p class="muted">Not recorded for this attempt.</p>
      )}
    </section>
  );
}

function ResponsePart({
  response,
  status,
  number,
}: {
  response: AttemptResponse | null;
  status: number | null;
  number: number;
}) {
  return (
    <section class="exchange-part" aria-label={`Response of attempt ${number}`}>
      <h3>Response</h3>
      {response ? (
        <>
          {status !== null ? (
            <p class="mono exchange-line">
              <span class={status < 300 ? 'http-ok' : 'http-bad'}>{status}</span>
            </p>
          ) : null}
          <HeaderTable headers={response.headers} caption={`Response headers of attempt ${number}`} />
          <h4 class="exchange-body-title">Body</h4>
          {response.body === null || response.body === '' ? (
            <p class="muted">{response.body === null ? 'Not kept.' : 'Empty.'}</p>
          ) : (
            <pre
              class="code-block"
              tabIndex={0}
              role="region"
              aria-label={`Response body of attempt ${number}`}
            >
              <code>{readable(response.body, response.bodyTruncated)}</code>
            </pre>
          )}
          {response.bodyTruncated ? (
            <p class="field-hint">Only the start of the body is kept; the rest was cut.</p>
          ) : null}
        </>
      ) : (
        <p class="muted">No answer: the receiver was not reached, or did not answer.</p>
      )}
    </section>
  );
}

/** What one attempt sent and what came back. */
export function AttemptExchange({
  request,
  response,
  status,
  number,
}: {
  request: AttemptRequest | null;
  response: AttemptResponse | null;
  status: number | null;
  number: number;
}) {
  return (
    <div class="exchange">
      <RequestPart request={request} number={number} />
      <ResponsePart response={response} status={status} number={number} />
    </div>
  );
}
