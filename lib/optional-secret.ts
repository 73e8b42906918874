import { z } from 'zod';

/**
 * A secret read from the environment: unset or empty means none, and one shorter than
 * `minLength` is refused by name, since a short credential can be guessed.
 */
export function optionalSecret(minLength: number) {
  return z
    .string()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || v.length >= minLength, { message: `must be at least ${minLength} characters` });
}
