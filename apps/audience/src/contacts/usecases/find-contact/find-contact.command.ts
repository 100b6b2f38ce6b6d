import type { Principal } from '@meld/auth';

export interface FindContactCommand {
  principal: Principal;
  organizationId: string;
  projectId: string;
  /** `phone`: as received (decoded, `%2B` → `+`); `email`: as received; `user`: the `_user_id`. */
  by: 'phone' | 'email' | 'user';
  value: string;
}
