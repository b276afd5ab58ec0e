import { Type, type TObjectOptions, type TProperties, type TSchema } from 'typebox';

/** Building blocks shared by every route schema (validation and OpenAPI from one definition). */
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A column value as the API shows an optional `Timestamp`: RFC 3339 UTC, or null. */
export const isoOrNull = (value: Date | string | null): string | null =>
  value === null ? null : new Date(value).toISOString();

/** A request body object: unknown fields are refused (docs/api/errors.md). */
export const StrictObject = <T extends TProperties>(properties: T, options: TObjectOptions = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

/** `http` → `Http`, `EMAIL` → `Email`, `some_key` → `SomeKey`: part of a component schema's name. */
export const pascalCase = (key: string): string =>
  key
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** The success answer of a delete or sign-out: status 204 and no body. */
export const NoContent = Type.Null({ description: 'No content' });

export const IdParams = StrictObject({ id: Type.String({ description: 'Opaque ID' }) });

export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), nextCursor: Nullable(Type.String()) });

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Nullable(Type.String()),
    requestId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);
