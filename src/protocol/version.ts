/**
 * Document identifiers of OACP v1 and the one rule every reader follows: a document that declares a version we
 * do not know is refused with an error naming it, never interpreted and never dropped silently (the reference
 * drops unknown report versions: reference-behaviours §1.5, §8.17).
 */
export const PROTOCOL_VERSION = '1';

export const DOCUMENT_IDS = {
  task: 'caesar.task/v1',
  report: 'caesar.report/v1',
  event: 'caesar.event/v1',
} as const;

export type DocumentKind = keyof typeof DOCUMENT_IDS;

/** Versions this reader accepts, per document. A v1→v2 transition would list both here. */
export const KNOWN_VERSIONS: Record<DocumentKind, readonly string[]> = {
  task: [DOCUMENT_IDS.task],
  report: [DOCUMENT_IDS.report],
  event: [DOCUMENT_IDS.event],
};

/** Raised when a document declares `caesar.<kind>/vN` with an N this reader does not know. */
export class UnsupportedVersionError extends Error {
  override readonly name = 'UnsupportedVersionError';
  constructor(
    readonly kind: DocumentKind,
    readonly found: string,
  ) {
    super(
      `Unsupported protocol version "${found}": this reader knows ${KNOWN_VERSIONS[kind].map((v) => `"${v}"`).join(', ')}. ` +
        `Upgrade Caesar, or have the agent write ${DOCUMENT_IDS[kind]}.`,
    );
  }
}

const VERSIONED_ID = /^caesar\.(task|report|event)\/v\d+$/;

/**
 * Throws UnsupportedVersionError when `doc.protocol` names a version of this document kind that we do not know.
 * A missing or malformed `protocol` is left to schema validation, which reports it as an ordinary field error.
 */
export function assertKnownVersion(kind: DocumentKind, doc: unknown): void {
  if (typeof doc !== 'object' || doc === null) return;
  const declared = (doc as { protocol?: unknown }).protocol;
  if (typeof declared !== 'string' || !VERSIONED_ID.test(declared)) return;
  if (declared.startsWith(`caesar.${kind}/`) && !KNOWN_VERSIONS[kind].includes(declared)) {
    throw new UnsupportedVersionError(kind, declared);
  }
}
