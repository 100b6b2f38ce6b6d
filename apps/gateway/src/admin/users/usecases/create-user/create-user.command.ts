import { z } from 'zod';

export const CreateUserBody = z
  .strictObject({
    email: z.email().max(320).transform((e) => e.toLowerCase()).describe('login of the dashboard consent screen; unique'),
    password: z.string().min(8).max(200).describe('stored as a salted scrypt hash, never returned'),
  })
  .meta({ id: 'CreateUserBody' });

export type CreateUserCommand = z.infer<typeof CreateUserBody> & { organizationId: string };
