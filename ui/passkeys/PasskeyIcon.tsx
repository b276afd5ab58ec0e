// The passkey mark, beside the sign-in button and each passkey of the list.
/** The passkey mark (a person and a key), drawn in the text's colour; decoration only. */
export function PasskeyIcon({ size = 18 }: { size?: number }) {
  return (
    <svg
      class="passkey-icon"
      viewBox="0 0 24 24"
      width={size}
      height={size}
      aria-hidden="true"
      focusable="false"
    >
      <circle cx="9" cy="7" r="4" fill="currentColor" />
      <path d="M2 20c0-3.9 3.1-7 7-7 1.3 0 2.5.3 3.5.9V20H2z" fill="currentColor" />
      <circle cx="18" cy="10.5" r="3" fill="none" stroke="currentColor" stroke-width="2" />
      <path
        d="M18 13.5V21l1.8-1.6L18 18l1.8-1.4"
        fill="none"
        stroke="currentColor"
        stroke-width="2"
        stroke-linejoin="round"
      />
    </svg>
  );
}
