import { useId } from 'preact/hooks';
import type { Connector } from '../api-types.js';

/** The connector choice: one radio per catalog entry, named by the connector, described by its text. */
export function ConnectorChoice({
  connectors,
  chosen,
  onChoose,
}: {
  connectors: Connector[];
  chosen: string | undefined;
  onChoose: (key: string) => void;
}) {
  const base = useId();
  return (
    <fieldset class="connector-choice">
      <legend>Connector</legend>
      <p class="field-hint">Where the events go, and how they are delivered.</p>
      <div class="connector-options">
        {connectors.map((connector) => {
          const nameId = `${base}-${connector.connectorKey}-name`;
          const descriptionId = `${base}-${connector.connectorKey}-description`;
          return (
            <label
              key={connector.connectorKey}
              class={`connector-option${connector.enabled ? '' : ' connector-option-off'}`}
            >
              <input
                type="radio"
                name="connectorKey"
                value={connector.connectorKey}
                checked={chosen === connector.connectorKey}
                disabled={!connector.enabled}
                required
                aria-labelledby={nameId}
                aria-describedby={descriptionId}
                onChange={() => onChoose(connector.connectorKey)}
              />
              <span class="connector-option-text">
                <span class="connector-option-name" id={nameId}>
                  {connector.name}
                </span>
                <span class="connector-option-description" id={descriptionId}>
                  {connector.enabled
                    ? connector.description
                    : `${connector.description} Switched off by the platform operator.`}
                </span>
              </span>
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}
