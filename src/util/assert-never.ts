/** Exhaustiveness check for discriminated unions: a new variant fails to compile where it is not handled. */
export function assertNever(value: never): never {
  throw new Error(`Unhandled variant: ${JSON.stringify(value)}`);
}
