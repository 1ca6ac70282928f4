/**
 * Shapes of the record-type catalogue: one {@link RecordTypeSpec} per record type drives
 * client inputs, CLI flags, payload mapping, validation (client and service) and help text.
 * The payload table is docs/service.md "Record payloads"; how top-level members are filled,
 * docs/wire-format.md "Evidence records".
 */

export const RECORD_TYPES = [
  'ai_risk_assessment',
  'governance_review',
  'model_evaluation',
  'training_data_governance',
  'human_oversight',
  'incident_report',
  'change_event',
  'access_review',
  'vendor_risk',
  'model_drift_event',
  'policy_acknowledged',
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export const ENVIRONMENTS = ['production', 'staging', 'development'] as const;
export const FRAMEWORKS = ['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/**
 * Value kinds a payload field can take.
 * `date` is YYYY-MM-DD, `datetime` ISO 8601 with a time, `number-map` an object of name → number.
 */
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'string[]' | 'number-map' | 'date' | 'datetime';

export interface FieldSpec {
  /** payload key (snake_case), the wire name */
  readonly wire: string;
  /** the client library's input name (camelCase) */
  readonly input: string;
  readonly kind: FieldKind;
  /** required in the stored payload (after defaults are applied) */
  readonly required: boolean;
  readonly enum?: readonly string[];
  /** applied by the client when the input is not given; `undefined` means none */
  readonly default?: string | number | boolean;
  readonly min?: number;
  readonly max?: number;
  /** CLI flag name when it is not the kebab-case wire name (array fields take a singular flag) */
  readonly flag?: string;
  /** true when a client input gives the value: false for values the client always sets itself */
  readonly fixed?: boolean;
  readonly description: string;
  /**
   * A realistic value, as the payload holds it: help examples are built from these (and a test
   * builds and validates a record from them), so every field has one.
   */
  readonly example: FieldExample;
}

/** An example value of a field: what its payload key holds. */
export type FieldExample = string | number | boolean | readonly string[] | Readonly<Record<string, number>>;

/** A client input that fills a top-level member of the record rather than a payload key. */
export interface TopInputSpec {
  readonly input: string;
  readonly flag: string;
  readonly kind: 'string' | 'datetime';
  readonly required: boolean;
  readonly enum?: readonly string[];
  readonly description: string;
  /** a realistic value, for help examples */
  readonly example: string;
}

/** Top-level members other than record_type/payload/system_name. */
export interface TopLevel {
  identity?: string;
  resource?: string;
  environment?: string;
  occurred_at?: string;
}

export interface ValidationIssue {
  /** dotted path of the offending field, e.g. `payload.risk_level` */
  readonly path: string;
  readonly code: 'required' | 'type' | 'enum' | 'range' | 'format' | 'rule';
  readonly message: string;
}

export type Payload = Record<string, unknown>;

export interface RecordTypeSpec {
  readonly type: RecordType;
  /** client library method name */
  readonly method: string;
  readonly title: string;
  readonly summary: string;
  readonly fields: readonly FieldSpec[];
  readonly topInputs: readonly TopInputSpec[];
  /** cross-field rules on the payload (beyond per-field kind, enum and range checks) */
  readonly rules?: (payload: Payload) => ValidationIssue[];
  /** defaults that depend on other payload values (e.g. human_oversight's `override`) */
  readonly derivePayload?: (payload: Payload) => void;
  /** how the record's top-level members are filled from the payload and top inputs (docs/service.md "Record payloads") */
  readonly topLevel: (payload: Payload, top: Record<string, string | undefined>) => TopLevel;
  /** whether the record's system_name comes from a top input rather than the configured system */
  readonly systemFromInput?: string;
}
